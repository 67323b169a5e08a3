// The delivery soak, a correctness run on PostgreSQL (1 `serve` + 2 workers): reports make notifications for
// four webhooks (W1 fails, then recovers; W2 is slower than the delivery timeout; W3 is good; W4 is
// force-deleted halfway) while W1 and W3 are edited and verified; every notification must reach its end.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { num, type Common } from '../lib/options.js';
import * as pg from '../lib/postgres.js';
import { startReceiver } from '../lib/receiver.js';
import { ReportSender, sendPaced } from '../lib/reports.js';
import * as r from '../lib/report.js';
import * as service from '../lib/service.js';
import { nodeToken, reportBody, seedDatabase } from '../notify/seed.js';

const NAME = 'soak: PostgreSQL, 1 serve + 2 worker processes, 4 webhooks';
export const SOAK_CASES: (r.Case & { database: 'postgres' })[] = [{ name: NAME, database: 'postgres' }];

const NODES = 1_000;
const TIMEOUT_MS = 1_000;
/** Short, so a failing webhook reaches its 10th failure (and is disabled) within seconds. */
const SCHEDULE = '100ms,200ms,500ms';
// A held delivery expires on release unless among its webhook's newest 1,000: W1's failing stretch, and how
// far the reports may run ahead of W3's deliveries (BACKLOG), stay well below that, so a loss is a fault.
const W1_RECOVERS_AT = 0.12;
const W4_DELETE_AT = 0.5;
const BACKLOG = 300;
const STATUSES = ['delivered', 'held', 'expired', 'failed', 'pending'] as const;

export async function runSoakSection(cases: typeof SOAK_CASES, common: Common): Promise<r.SectionResult> {
  const out = r.emptyResult();
  if ((await pg.runnable(cases, common.postgresUrl, out, 'a fresh database')).length === 0) return out;
  const [seconds, changes] = [num('soak-seconds'), Math.ceil(num('soak-notifications') / 3)];
  const db = await pg.createBenchDatabase(common.postgresUrl);
  const stops: (() => Promise<unknown>)[] = [db.drop];
  try {
    r.progress(`soak: seeding ${NODES} nodes into ${db.name}`);
    const { env } = await seedDatabase(db.url, NODES);
    Object.assign(env, { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS), DELIVERY_RETRY_SCHEDULE: SCHEDULE });
    Object.assign(env, { NODE_HEARTBEAT_TIMEOUT_S: '3600', MAX_WEBHOOKS_PER_USER: '4' });
    Object.assign(env, service.localWebhooksEnv(common.certificates));
    // `serve` runs the API and a dispatcher of its own, so deliveries also start where they are made.
    const start = async (role: 'worker' | undefined, n = 1) => {
      const logFile = path.join(common.workDir, `soak-${role ?? 'serve'}-${n}.log`);
      const started = await service.startService({ role, nodeOptions: common.nodeOptions, logFile, env });
      stops.unshift(started.stop);
      return started;
    };
    const serve = await start(undefined);
    await Promise.all([start('worker', 1), start('worker', 2)]);
    const api = serve.api!;
    // A receiver and its verified webhook, with an alert of its own; the counts are filled in at the end.
    const hook = async (name: string, behaviour: string, answer?: () => { status: number } | undefined) => {
      const secret = randomBytes(24).toString('base64url');
      const receiver = await startReceiver(common.certificates, secret, answer);
      stops.push(receiver.close);
      const id = await service.verifiedWebhook(api, name, receiver.url(`/${name}`), secret);
      const alert = await service.tunnelAlert(api, `Tunnels to ${name}`, id);
      const counts = { delivered: 0, held: 0, expired: 0, failed: 0, pending: 0 };
      const path = `/api/v1/webhook/${id}`;
      return Object.assign(receiver, { name, behaviour, id, path, alert, made: 0, counts, state: 'deleted' });
    };
    let w1Failing = true;
    const failing = () => (w1Failing ? { status: 503 } : undefined);
    const slow = { status: 200, delayMs: 2 * TIMEOUT_MS };
    const w1 = await hook('W1', `503, then 2xx from ${W1_RECOVERS_AT * 100} % of the changes`, failing);
    const w2 = await hook('W2', `2xx after ${slow.delayMs} ms, past the delivery timeout`, () => slow);
    const w3 = await hook('W3', '2xx');
    const w4 = await hook('W4', `2xx; force-deleted at ${W4_DELETE_AT * 100} % of the changes`);
    type Hook = typeof w1;
    const all = [w1, w2, w3, w4];
    const kept = [w1, w2, w3];
    const deliveries = (x: Hook, status: string) => api.count(`${x.path}/deliveries?status=${status}`);

    // The actions, one at a time beside the reports; one refused is a finding, not a reason to stop.
    const done = { PUT: 0, POST: 0, DELETE: 0 };
    let actions = Promise.resolve();
    const act = (method: keyof typeof done, path: string, body?: object) => {
      done[method] += 1;
      actions = actions.then(async () => {
        const answer = await api.request(method, path, body).catch((e) => ({ status: 0, body: String(e) }));
        // 409: already enabled (verified since its last edit, and not failed ten times since).
        if (answer.status !== 409 && (answer.status >= 300 || answer.body?.status === 'FAILED'))
          out.warnings.push(`soak: ${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      });
    };
    const edit = (x: Hook) => act('PUT', x.path, { name: `${x.name} edit ${done.PUT + 1}` });
    const verify = (x: Hook) => act('POST', `${x.path}/verify`, {});
    const step = Math.max(1, Math.floor(changes / 48));
    const cycle = [() => edit(w3), () => verify(w3), () => edit(w1), () => verify(w1)];
    // W3 is good: its pending deliveries are how far the deliveries lag behind the reports.
    let [backlog, producing] = [0, true];
    const watching = (async () => {
      for (; producing; await sleep(250)) backlog = await deliveries(w3, 'pending');
    })();
    r.progress(`soak: ${changes} changes over at least ${seconds} s, ${3 * changes} notifications to W1–W3`);
    const sender = new ReportSender([serve.baseUrl!], nodeToken, 16);
    const began = performance.now();
    const elapsedS = () => ((performance.now() - began) / 1000).toFixed(0);
    const report = (k: number) => {
      if (k > 0 && k % step === 0) cycle[(k / step - 1) % cycle.length]!();
      if (k === Math.floor(changes * W1_RECOVERS_AT)) {
        w1Failing = false;
        verify(w1);
      }
      // The webhook goes with its alert; it has committed once the API answers.
      if (k === Math.floor(changes * W4_DELETE_AT)) act('DELETE', `/api/v1/user/webhook/${w4.id}?force=true`);
      if ((k + 1) % Math.ceil(changes / 10) === 0)
        r.progress(`soak: ${k + 1} changes in ${elapsedS()} s, W3 backlog ${backlog}`);
      return { node: k % NODES, body: reportBody(Math.floor(k / NODES)) };
    };
    // Every change is sent, late rather than not at all when the deliveries fall behind.
    const hold = (waiting: number) => waiting >= 16 || backlog > BACKLOG;
    await sendPaced(sender, changes, report, changes / seconds, { hold, drainMs: 120_000 });
    await sender.close();
    producing = false;
    await watching;
    // What a user would do once W1 is healthy again: verify both edited webhooks, which sends what they held.
    [w1, w3].forEach(verify);
    await actions;
    const reportsS = elapsedS();
    if (sender.failed > 0) out.warnings.push(`soak: ${sender.failed} reports failed: ${sender.firstFailure}`);
    const drainS = Math.max(60, seconds);
    const pending = () => Promise.all(kept.map((x) => deliveries(x, 'pending')));
    const drainedBy = performance.now() + drainS * 1000;
    let left = await pending();
    for (; left.some(Boolean) && performance.now() < drainedBy; await sleep(2_000), left = await pending())
      r.progress(`soak: deliveries pending: ${kept.map((x, i) => `${x.name} ${left[i]}`).join(', ')}`);
    // A late second send of a delivered notification would come now, if ever.
    await sleep(2_000);
    for (const x of all) {
      x.made = await api.count(`/api/v2/notification?alert_id=${x.alert}`);
      if (x === w4) continue;
      for (const status of STATUSES) x.counts[status] = await deliveries(x, status);
      const { is_enabled, disabled_reason } = await api.call('GET', x.path);
      x.state = is_enabled ? 'enabled' : `disabled (${disabled_reason})`;
    }
    const delivered = ({ name, behaviour, made, counts }: Hook) =>
      r.exactly(`soak: ${name} (${behaviour})`, `all ${r.whole(made)} delivered`, counts.delivered, made);
    const w2Settled = w2.counts.delivered + w2.counts.held + w2.counts.expired + w2.counts.failed;
    const duplicates = all.flatMap((x) => x.duplicates.map((id) => `${x.name} ${id}`));
    if (duplicates.length > 0)
      out.warnings.push(`soak: received again after 2xx: ${duplicates.slice(0, 5).join(', ')}`);
    out.checks.push(
      {
        subject: 'soak: notifications made',
        goal: 'one per change for each of W1–W3 (every report answered 2xx)',
        actual: `${kept.map((x) => `${x.name} ${r.whole(x.made)}`).join(', ')} for ${r.whole(changes)} changes`,
        met: kept.every((x) => x.made === changes),
      },
      ...[w1, w3].map(delivered),
      {
        subject: `soak: W2 (${w2.behaviour}, DELIVERY_TIMEOUT_MS=${TIMEOUT_MS})`,
        goal: 'none pending: disabled as failing after 10 timeouts, its notifications held (verifying it sends them)',
        actual: `${r.whole(w2.counts.held)} held, ${r.whole(w2Settled)} settled of ${r.whole(w2.made)}; ${w2.state}`,
        met: w2Settled === w2.made && w2.state === 'disabled (failing)',
      },
      r.exactly(
        'soak: duplicate sends',
        'no delivery id received again after its receiver answered it 2xx',
        duplicates.length,
      ),
      r.exactly(
        'soak: deliveries left pending',
        `none, at most ${drainS} s after the last report`,
        kept.reduce((sum, x) => sum + x.counts.pending, 0),
      ),
    );
    const rows = all.map((x) => [
      x.name,
      x.behaviour,
      r.whole(x.made),
      ...STATUSES.map((s) => (x === w4 ? '' : r.whole(x.counts[s]))),
      x.state,
      ...[x.requests, x.delivered.size, x.duplicates.length].map(r.whole),
    ]);
    const head =
      `webhook | receiver | notifications made | ${STATUSES.join(' | ')} | at the end | requests | ` +
      'ids answered 2xx | received again after 2xx';
    out.output.push(
      `Soak: ${NAME}. DELIVERY_TIMEOUT_MS=${TIMEOUT_MS}, DELIVERY_RETRY_SCHEDULE=${SCHEDULE}; ${r.whole(changes)} ` +
        `changes (reports of ${NODES} nodes) in ${reportsS} s, each a notification to every webhook; ` +
        `${done.PUT} edits and ${done.POST} verifies of W1 and W3 among and after them\n`,
      r.table(head, rows, [0, 1, 8]),
    );
    return out;
  } finally {
    for (const stop of stops) await stop();
  }
}
