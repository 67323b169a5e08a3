import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepSilentNodes } from '../src/features/fleet/liveness/sweep.js';
import { HEARTBEAT_FLUSH_MS } from '../src/features/fleet/reports/heartbeats.js';
import { eventsOfNode } from '../src/features/fleet/events/repo.js';
import type { AppContext } from '../src/context.js';
import { startTestApp, type TestApp } from './support/harness.js';

const TIMEOUT_S = 90;
/** Silence is counted from when a buffered heartbeat would have been written at the latest. */
const JUDGED_AFTER_MS = TIMEOUT_S * 1_000 + HEARTBEAT_FLUSH_MS;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

/** The service's context on a clock the test sets. */
function at(time: number): AppContext {
  return { ...t.ctx, clock: { now: () => time } };
}

async function aliveNode(name: string): Promise<string> {
  const created = await t.request('POST', '/api/v1/node', { body: { name } });
  const res = await t.request('POST', '/api/v1/agent/report', {
    key: null,
    headers: { 'x-node-token': created.body.token as string },
  });
  expect(res.status, res.text).toBe(200);
  return created.body.id as string;
}

async function stateOf(id: string) {
  return (await t.request('GET', `/api/v1/node/${id}`)).body.node_state as string;
}

async function lastSeen(id: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('nodes')
    .select('last_seen_at')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return Number(row.last_seen_at);
}

describe('the liveness sweep', () => {
  it('turns a node silent for the timeout UNREACHABLE, with its event, and leaves NEW nodes alone', async () => {
    const silent = await aliveNode('silent');
    const fresh = await t.request('POST', '/api/v1/node', { body: { name: 'never-reported' } });
    const seen = await lastSeen(silent);
    const started = seen - 10 * TIMEOUT_S * 1_000;

    expect(await sweepSilentNodes(at(seen + JUDGED_AFTER_MS), started)).toBe(0);
    expect(await stateOf(silent)).toBe('ALIVE');

    const judged = seen + JUDGED_AFTER_MS + 1;
    expect(await sweepSilentNodes(at(judged), started)).toBeGreaterThanOrEqual(1);
    expect(await stateOf(silent)).toBe('UNREACHABLE');
    expect(await stateOf(fresh.body.id as string)).toBe('NEW');
    const events = await eventsOfNode(t.ctx.db, silent);
    expect(events.at(-1)).toMatchObject({
      type: 'NODE_STATE_CHANGE',
      condition: 'UNREACHABLE',
      previous_state: 'ALIVE',
      current_state: 'UNREACHABLE',
      sequence: 2,
      occurred_at: seen + TIMEOUT_S * 1_000,
      detected_at: judged,
    });
    const read = await t.request('GET', `/api/v1/node/${silent}`);
    expect(read.body.headless_expires_at).toEqual(new Date(judged + 1_440 * 60_000).toISOString());

    // A second sweep changes nothing.
    expect(await sweepSilentNodes(at(judged + 5_000), started)).toBe(0);
    expect((await eventsOfNode(t.ctx.db, silent)).length).toBe(2);
  });

  it('judges nobody until a full timeout has passed since it started (edgewatch was down)', async () => {
    const node = await aliveNode('after-restart');
    const seen = await lastSeen(node);
    const restarted = seen + 10 * TIMEOUT_S * 1_000;
    expect(await sweepSilentNodes(at(restarted + TIMEOUT_S * 1_000 - 1), restarted)).toBe(0);
    expect(await stateOf(node)).toBe('ALIVE');
    expect(await sweepSilentNodes(at(restarted + TIMEOUT_S * 1_000), restarted)).toBeGreaterThanOrEqual(1);
    expect(await stateOf(node)).toBe('UNREACHABLE');
  });

  it('makes an UNREACHABLE node ALIVE again on its next report', async () => {
    const created = await t.request('POST', '/api/v1/node', { body: { name: 'comes-back' } });
    const token = created.body.token as string;
    const id = created.body.id as string;
    await t.request('POST', '/api/v1/agent/report', { key: null, headers: { 'x-node-token': token } });
    const seen = await lastSeen(id);
    await sweepSilentNodes(at(seen + JUDGED_AFTER_MS + 1), seen - 10 * TIMEOUT_S * 1_000);
    expect(await stateOf(id)).toBe('UNREACHABLE');
    await t.request('POST', '/api/v1/agent/report', { key: null, headers: { 'x-node-token': token } });
    expect(await stateOf(id)).toBe('ALIVE');
    // By sequence: the sweep ran on a clock ahead of the real one.
    const events = (await eventsOfNode(t.ctx.db, id))
      .sort((a, b) => a.sequence - b.sequence)
      .map((event) => [event.previous_state, event.current_state]);
    expect(events).toEqual([
      ['NEW', 'ALIVE'],
      ['ALIVE', 'UNREACHABLE'],
      ['UNREACHABLE', 'ALIVE'],
    ]);
  });
});
