// The mass outage: 5,000 nodes in 10 organizations stop reporting at once. The liveness sweep finds them
// UNREACHABLE in one pass, and four alerts grouped by organization (webhook, Slack, PagerDuty, e-mail) tell it:
// how many messages, how soon the first and the last; then the fleet returns and each incident sends its
// resolve. Beside it, Alertmanager grouping the same 5,000 alerts by organization with the same wait.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findAlertmanager, startAlertmanager } from '../lib/alertmanager.js';
import type { Common } from '../lib/options.js';
import * as r from '../lib/report.js';
import * as service from '../lib/service.js';
import { seedDatabase } from '../notify/seed.js';
import { agents, awaitSweepWindow, orgName, registerFleet, unreachableEvents } from './fleet.js';
import { CHANNELS, PAGERDUTY_PATH, SLACK_PATH, startStandIns, type Arrival, type StandIns } from './sinks.js';

const NAME = 'outage: SQLite, 10 organizations × 500 nodes, 4 channels';
const ALERTMANAGER = 'outage anchor: Alertmanager';
export const OUTAGE_CASES: r.Case[] = [
  { name: NAME, anchors: [ALERTMANAGER] },
  { name: ALERTMANAGER, anchor: true },
];

const [ORGS, PER_ORG, GROUP_WAIT_S, LAST_S] = [10, 500, 10, 12];
const NODES = ORGS * PER_ORG;
/** Outlasts the setup between a node's first report and its last (5 to 9 s): no node goes silent early. */
const TIMEOUT_S = 12;
const seconds = (ms: number) => r.fixed(ms / 1000, 2);
const ratio = (a: number, b: number | undefined) => r.fixed(b === undefined ? undefined : a / b, 2);

/** Waits until `from` + group_wait + 4 s, then until `done` holds and 2 s pass without a message (60 s at most). */
async function settle(sinks: StandIns, from: number, done = () => true) {
  await sleep(Math.max(0, from + GROUP_WAIT_S * 1_000 + 4_000 - Date.now()));
  const latest = () => Math.max(0, ...Object.values(sinks.arrivals).flatMap((list) => list.map((a) => a.at)));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && (!done() || Date.now() - latest() < 2_000)) await sleep(100);
}

/** Messages per organization, least–most (`ok`: every one told, nothing else); first and last after `from`. */
function figures(arrivals: Arrival[], from: number) {
  const perOrg = Array.from({ length: ORGS }, (_, n) => arrivals.filter((a) => a.org === orgName(n)).length);
  const [min, max, times] = [Math.min(...perOrg), Math.max(...perOrg), arrivals.map((a) => a.at - from)];
  const [first, last] = times.length === 0 ? [NaN, NaN] : [Math.min(...times), Math.max(...times)];
  const ok = min >= 1 && perOrg.reduce((a, b) => a + b) === arrivals.length;
  return { count: arrivals.length, perOrg: `${min}–${max}`, max, ok, first, last };
}

const told = (list: Arrival[], resolved = false) =>
  new Set(list.filter((a) => a.resolved === resolved).map((a) => a.org)).size === ORGS;

/** How long each pass of the sweep since `from` took (ms), from the service's log. */
function passTimes(logFile: string, from: number): number[] {
  const lines = fs.readFileSync(logFile, 'utf8').split('\n');
  const entries = lines.flatMap((line) => (line.startsWith('{') ? [JSON.parse(line)] : []));
  const passes = entries.filter((e) => e.msg === 'silent nodes are UNREACHABLE' && (e.time ?? 0) >= from);
  return passes.map((e) => e.ms ?? NaN);
}

async function measureService(common: Common, dir: string, sinks: StandIns, secret: string) {
  const seeded = await seedDatabase(`sqlite:${path.join(dir, 'edgewatch.db')}`, 0);
  const env = {
    ...{ ...seeded.env, NODE_HEARTBEAT_TIMEOUT_S: String(TIMEOUT_S), SMTP_URL: sinks.smtpUrl },
    ...{ PAGERDUTY_EVENTS_URL: sinks.url(PAGERDUTY_PATH), ...service.localWebhooksEnv(common.certificates) },
  };
  const logFile = path.join(dir, 'serve.log');
  const started = await service.startService({ nodeOptions: common.nodeOptions, logFile, env });
  const [api, baseUrl] = [started.api!, started.baseUrl!];
  let fleet: ReturnType<typeof agents> | undefined;
  try {
    const probe = await api.call('POST', '/api/v1/node', { name: 'outage-sweep-probe' });
    const prober = agents(baseUrl, [probe.token]);
    await prober.burst().finally(prober.close);
    r.progress(`outage: registering ${ORGS} organizations × ${PER_ORG} nodes through the API`);
    fleet = agents(baseUrl, await registerFleet(api, ORGS, PER_ORG));
    const channel = async (body: object) => (await api.call('POST', '/api/v1/channel', body)).id as string;
    const pagerDuty = { name: 'Outage PD', type: 'pagerduty', routing_key: 'R0UT1NGKEY0OUTAGE0BENCH' };
    const targets = {
      webhook: await service.verifiedWebhook(api, 'Outage receiver', sinks.url('/hook'), secret),
      slack: await channel({ name: 'Outage Slack', type: 'slack', url: sinks.url(SLACK_PATH) }),
      pagerduty: await channel(pagerDuty),
      email: undefined,
    };
    await fleet.burst();
    // After the first reports: a PagerDuty alert would also take each NEW → ALIVE (a return to good).
    const { org_id } = await api.call('GET', '/api/v1/user/me');
    const settings = { org_id, include_child: true, alert_me: 'UNREACHABLE', group_by: 'organization' };
    const subscribe = async () => {
      for (const [channel_type, channel_id] of Object.entries(targets)) {
        const alert = {
          name: `Outage to ${channel_type}`,
          type: 'NODE_STATE_CHANGE',
          channel_type,
          channel_id,
        };
        await api.call('POST', '/api/v1/mysubscriptions', {
          ...alert,
          settings: { ...settings, group_wait: GROUP_WAIT_S },
        });
      }
    };
    r.progress('outage: the sweep finds a probe node; then every node reports once more, and all stop');
    // After the probe's pass: its UNREACHABLE would open an incident of its own on every channel.
    await awaitSweepWindow(api, probe.id, TIMEOUT_S, subscribe);
    const lastAt = Date.now();
    await fleet.burst();
    const unreachable = async () => (await api.count('/api/v2/node?node_state=UNREACHABLE')) - 1; // the probe
    if ((await unreachable()) > 0) throw new Error('nodes went UNREACHABLE before the outage');
    await r.until(async () => (await unreachable()) === NODES, `${NODES} nodes UNREACHABLE`, 250);
    await settle(sinks, Date.now());
    const sweep = { ...(await unreachableEvents(api, lastAt)), ms: passTimes(logFile, lastAt) };
    const outage = sinks.take();

    r.progress('outage: the fleet returns: every node reports again, then every 10 s');
    await fleet.burst();
    await r.until(async () => (await unreachable()) === 0, 'every node ALIVE again', 250);
    const [newest] = (await api.call('GET', '/api/v2/event?type=NODE_STATE_CHANGE&size=1')).results;
    const recoveredAt = Date.parse(newest.detected_at);
    const allResolved = () => CHANNELS.every((c) => told(sinks.arrivals[c], true));
    const stop = fleet.keepReporting(10_000);
    await settle(sinks, recoveredAt, allResolved).finally(stop);
    return { sweep, outage, recoveredAt, returned: sinks.take() };
  } finally {
    await fleet?.close();
    await started.stop();
  }
}

/**
 * The anchor: the same alerts in one POST, grouped by organization with the same wait. Its resolves would go
 * out group_interval (5 m) after a group's last message: not waited for.
 */
async function measureAlertmanager(binary: string, dir: string, common: Common, sinks: StandIns) {
  const timing = { group_wait: `${GROUP_WAIT_S}s`, group_interval: '5m', repeat_interval: '4h' };
  const route = { group_by: ['org'], ...timing };
  const [url, caFile] = [sinks.alertmanagerUrl, common.certificates.caFile];
  const alertmanager = await startAlertmanager(binary, { dir, route, url, caFile, sendResolved: true });
  const alerts = Array.from({ length: NODES }, (_, k) => ({
    labels: { alertname: 'NodeUnreachable', org: orgName(k % ORGS), node: `outage-${k}` },
  }));
  try {
    const sentAt = Date.now();
    await alertmanager.post(JSON.stringify(alerts));
    await settle(sinks, sentAt, () => told(sinks.arrivals.Alertmanager));
    return figures(sinks.take().Alertmanager, sentAt);
  } finally {
    await alertmanager.stop();
  }
}

export async function runOutageSection(cases: r.Case[], common: Common): Promise<r.SectionResult> {
  const out = r.emptyResult();
  const dir = path.join(common.workDir, 'outage');
  fs.mkdirSync(dir, { recursive: true });
  const alertmanager = cases.some((c) => c.name === ALERTMANAGER) ? findAlertmanager() : undefined;
  const secret = randomBytes(24).toString('base64url');
  const sinks = await startStandIns(common.certificates, secret);
  let ours: Awaited<ReturnType<typeof measureService>> | undefined;
  let am: ReturnType<typeof figures> | undefined;
  try {
    if (cases.some((c) => c.name === NAME)) ours = await measureService(common, dir, sinks, secret);
    // After the service has stopped, so that the two share the machine with nothing else.
    if (alertmanager) {
      r.progress(`Alertmanager: the same ${r.whole(NODES)} alerts in one POST`);
      am = await measureAlertmanager(alertmanager.path, path.join(dir, 'alertmanager'), common, sinks);
    }
  } finally {
    await sinks.close();
  }
  out.warnings.push(...sinks.problems());
  if (am !== undefined && am.max !== 1)
    out.warnings.push(`outage: Alertmanager sent ${am.perOrg} per organization`);
  const anchor = alertmanager ? `anchor ${alertmanager.version}` : 'Alertmanager is not installed: no anchor';
  out.output.push(
    `Mass outage: one \`serve\` on SQLite, NODE_HEARTBEAT_TIMEOUT_S=${TIMEOUT_S}, ${ORGS} organizations × ` +
      `${PER_ORG} nodes, alerts grouped by organization with group_wait ${GROUP_WAIT_S} s; ${anchor}`,
  );
  if (ours === undefined) return out;
  const { sweep, returned } = ours;
  if (sweep.passes !== 1 || sweep.events !== NODES)
    out.warnings.push(
      `outage: ${sweep.events} UNREACHABLE events in ${sweep.passes} passes, not ${NODES} in 1`,
    );
  out.output.push(`The sweep's pass over the outage took ${sweep.ms.map((ms) => seconds(ms)).join(' + ')} s`);
  const [outageRows, returnRows] = [[] as string[][], [] as string[][]];
  for (const c of CHANNELS) {
    const d = figures(ours.outage[c], sweep.detectedAt);
    const ratios = [ratio(d.count, am?.count), ratio(d.first, am?.first), ratio(d.last, am?.last)];
    outageRows.push([c, r.whole(d.count), d.perOrg, seconds(d.first), seconds(d.last), ...ratios]);
    const resolves = returned[c].filter((a) => a.resolved);
    const back = figures(resolves, ours.recoveredAt);
    const others = returned[c].length - resolves.length;
    returnRows.push([c, back.perOrg, r.whole(others), seconds(back.first), seconds(back.last)]);
    const subject = `outage ${c}`;
    const check = (goal: string, actual: string, met: boolean) => ({ subject, goal, actual, met });
    out.checks.push(
      check(
        'at most 2 messages per organization during the outage, each organization told',
        `${d.perOrg} per organization, ${d.count} in all`,
        d.max <= 2 && d.ok,
      ),
      r.goal(subject, 'first message after the sweep found the nodes', d.first / 1000, 1, 's'),
      r.goal(subject, 'last message of the outage after it', d.last / 1000, LAST_S, 's'),
      check(
        '1 resolve per organization after the return, nothing else',
        `${back.perOrg} per organization, ${others} other messages`,
        back.max === 1 && back.ok && others === 0,
      ),
    );
  }
  if (am !== undefined)
    outageRows.push(['Alertmanager', r.whole(am.count), am.perOrg, seconds(am.first), seconds(am.last)]);
  const intro = 'The outage: times (s) from the pass’s detected_at (Alertmanager: from its POST)';
  const head = 'messages | per organization | first message | last message | ÷ AM: messages | first | last';
  r.addTable(out, intro, `channel | ${head}`, outageRows);
  const returnHead = 'channel | resolves per organization | other messages | first resolve | last resolve';
  r.addTable(out, 'The return: times (s) from the last recovery (its detected_at)', returnHead, returnRows);
  return out;
}
