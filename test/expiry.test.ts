import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { CERT_EXPIRY_CHECK, expiryJobs, HEADLESS_EXPIRY_CHECK } from '../src/features/fleet/expiry/jobs.js';
import { sweepSilentNodes } from '../src/features/fleet/liveness/sweep.js';
import { HEARTBEAT_FLUSH_MS } from '../src/features/fleet/reports/heartbeats.js';
import { eventsOfNode } from '../src/features/fleet/events/repo.js';
import { Worker } from '../src/jobs/worker.js';
import { startTestApp, type TestApp } from './support/harness.js';

const DAY = 86_400_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

/** The service's context, and a worker for the expiry checks, on a clock the test sets. */
function at(time: number): { ctx: AppContext; worker: Worker } {
  const ctx = { ...t.ctx, clock: { now: () => time } };
  const worker = new Worker({
    db: t.ctx.db,
    queue: t.ctx.jobs,
    clock: ctx.clock,
    logger: t.ctx.logger,
    handlers: expiryJobs(ctx),
    pollMs: 60_000,
    leaseMs: 60_000,
  });
  return { ctx, worker };
}

async function registered(name: string, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/api/v1/node', { body: { name, ...body } });
  return { id: res.body.id as string, token: res.body.token as string };
}

async function report(token: string, body: unknown = {}) {
  const res = await t.request('POST', '/api/v1/agent/report', {
    key: null,
    headers: { 'x-node-token': token },
    body,
  });
  expect(res.status, res.text).toBe(200);
}

async function expiryEvents(nodeId: string, type: string) {
  return (await eventsOfNode(t.ctx.db, nodeId))
    .filter((event) => event.type === type)
    .map((event) => [event.condition, event.current_state]);
}

async function checks(kind: string, nodeId: string) {
  const rows = await t.ctx.db.selectFrom('jobs').select(['key', 'run_at']).where('kind', '=', kind).execute();
  return rows.filter((row) => row.key?.startsWith(nodeId)).sort((a, b) => a.run_at - b.run_at);
}

describe('CERT_EXPIRY', () => {
  it('fires at 80 % of the validity and at its end, once each, and follows a new certificate', async () => {
    const node = await registered('cert');
    const now = Date.now();
    const notBefore = now - 80 * DAY - 1_000;
    const notAfter = now + 20 * DAY;
    const certificate = {
      not_before: new Date(notBefore).toISOString(),
      not_after: new Date(notAfter).toISOString(),
    };
    await report(node.token, { certificate });
    // 80 % has passed already: the check is due at once and the service's own worker runs it.
    await t.jobsSettled();
    const expiry = new Date(notAfter).toISOString();
    expect(await expiryEvents(node.id, 'CERT_EXPIRY')).toEqual([['80', expiry]]);
    // The same certificate again schedules nothing new.
    await report(node.token, { certificate });
    expect((await checks(CERT_EXPIRY_CHECK, node.id)).map((check) => check.run_at)).toEqual([notAfter]);

    const end = at(notAfter);
    expect(await end.worker.runDue()).toBe(1);
    expect(await end.worker.runDue()).toBe(0);
    expect(await expiryEvents(node.id, 'CERT_EXPIRY')).toEqual([
      ['80', expiry],
      ['100', expiry],
    ]);

    // A renewed certificate: its own two checks replace whatever was left.
    const renewedAfter = notAfter + 365 * DAY;
    await report(node.token, {
      certificate: {
        not_before: new Date(notAfter).toISOString(),
        not_after: new Date(renewedAfter).toISOString(),
      },
    });
    expect((await checks(CERT_EXPIRY_CHECK, node.id)).map((check) => check.run_at)).toEqual([
      notAfter + Math.round(365 * DAY * 0.8),
      renewedAfter,
    ]);
    // The warned-of certificate was renewed: one RENEWED event (what resolves a PagerDuty incident).
    const renewed = ['RENEWED', new Date(renewedAfter).toISOString()];
    expect((await expiryEvents(node.id, 'CERT_EXPIRY')).sort()).toEqual([
      ['100', expiry],
      ['80', expiry],
      renewed,
    ]);
  });

  it('records no renewal for a certificate that was never warned of', async () => {
    const node = await registered('cert-quiet');
    const now = Date.now();
    const certificate = (notBefore: number, notAfter: number) => ({
      not_before: new Date(notBefore).toISOString(),
      not_after: new Date(notAfter).toISOString(),
    });
    await report(node.token, { certificate: certificate(now, now + 365 * DAY) });
    await report(node.token, { certificate: certificate(now, now + 730 * DAY) });
    await t.jobsSettled();
    expect(await expiryEvents(node.id, 'CERT_EXPIRY')).toEqual([]);
  });
});

describe('HEADLESS_EXPIRY', () => {
  it('fires at 80 % and 100 % of max_headless_time while the node stays unreachable, and is cancelled when it returns', async () => {
    const node = await registered('headless', { max_headless_time: 100 });
    await report(node.token);
    const seen = Number(
      (
        await t.ctx.db
          .selectFrom('nodes')
          .select('last_seen_at')
          .where('id', '=', node.id)
          .executeTakeFirstOrThrow()
      ).last_seen_at,
    );
    const silentAt = seen + 90_000 + HEARTBEAT_FLUSH_MS + 1;
    expect(await sweepSilentNodes(at(silentAt).ctx, seen - DAY)).toBeGreaterThanOrEqual(1);
    const scheduled = await checks(HEADLESS_EXPIRY_CHECK, node.id);
    expect(scheduled.map((check) => check.run_at)).toEqual([silentAt + 80 * 60_000, silentAt + 100 * 60_000]);

    expect(await at(silentAt + 80 * 60_000).worker.runDue()).toBe(1);
    const expiry = new Date(silentAt + 100 * 60_000).toISOString();
    expect(await expiryEvents(node.id, 'HEADLESS_EXPIRY')).toEqual([['80', expiry]]);

    // Back before the end: the 100 % check goes, and nothing more fires.
    await report(node.token);
    expect(await checks(HEADLESS_EXPIRY_CHECK, node.id)).toEqual([]);
    expect(await at(silentAt + 200 * 60_000).worker.runDue()).toBe(0);
    expect(await expiryEvents(node.id, 'HEADLESS_EXPIRY')).toEqual([['80', expiry]]);
  });
});
