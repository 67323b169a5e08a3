import { expect } from 'vitest';
import { sweepSilentNodes } from '../../src/features/fleet/liveness/sweep.js';
import { HEARTBEAT_FLUSH_MS } from '../../src/features/fleet/reports/heartbeats.js';
import type { TestApp } from './harness.js';
import { waitFor } from './jobs-fixture.js';

/** A node registered through the API (in `orgId`, or the caller's) that has reported once: ALIVE. */
export async function aliveNode(
  t: TestApp,
  name: string,
  options: { orgId?: string; report?: unknown } = {},
): Promise<{ id: string; token: string }> {
  const created = await t.request('POST', '/api/v1/node', {
    body: { name, ...(options.orgId === undefined ? {} : { create_under: options.orgId }) },
  });
  expect(created.status, created.text).toBe(201);
  const token = created.body.token as string;
  const res = await t.request('POST', '/api/v1/agent/report', {
    key: null,
    headers: { 'x-node-token': token },
    ...(options.report === undefined ? {} : { body: options.report }),
  });
  expect(res.status, res.text).toBe(200);
  return { id: created.body.id as string, token };
}

/** The node's last report as stored. */
export async function lastSeen(t: TestApp, id: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('nodes')
    .select('last_seen_at')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return Number(row.last_seen_at);
}

/** Runs the liveness sweep on a clock just past the node's silence; the time it judged at. */
export async function silence(t: TestApp, id: string): Promise<number> {
  const judged = (await lastSeen(t, id)) + t.config.nodeHeartbeatTimeoutS * 1_000 + HEARTBEAT_FLUSH_MS + 1;
  expect(await sweepSilentNodes({ ...t.ctx, clock: { now: () => judged } }, 0)).toBeGreaterThanOrEqual(1);
  return judged;
}

/** Polls until `check` holds, failing after a bound (the jobs fixture's `waitFor`, for a yes/no check). */
export async function until(what: string, check: () => boolean | Promise<boolean>, boundMs = 15_000) {
  await waitFor(what, async () => (await check()) || undefined, boundMs);
}
