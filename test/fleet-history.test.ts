import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobHandlers } from '../src/background.js';
import { FLEET_SNAPSHOT, takeSnapshot } from '../src/features/fleet/history/snapshot.js';
import { PRUNE_RETENTION } from '../src/features/retention/prune.js';
import { PERIODIC_KEY } from '../src/jobs/worker.js';
import { expectError } from './support/error-shape.js';
import { aliveNode, silence } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

let t: TestApp;
let root: string;
let east: string;
let eastChild: string;
let west: string;
let eastOperator: { key: string };
/** An hour two days ago: the seeded timeline lies well before anything the running snapshot job writes. */
let base: number;

const iso = (at: number) => new Date(at).toISOString();

async function org(name: string, parentId?: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/org', {
    body: { name, ...(parentId === undefined ? {} : { parent_id: parentId }) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

const counts = (nodes_unreachable: number, nodes_alive = 10) => ({
  nodes_alive,
  nodes_unreachable,
  nodes_new: 1,
  tunnels_unhealthy: 2,
  tunnels_unknown: nodes_unreachable,
  services_unhealthy: 0,
  services_unknown: 3 * nodes_unreachable,
});

/** Minutes stored as the snapshot would store them: the minute's row, and a row per organization given. */
async function seedMinute(minute: number, rows: Record<string, ReturnType<typeof counts>>) {
  await t.ctx.db.insertInto('fleet_history_minutes').values({ minute }).execute();
  const values = Object.entries(rows).map(([org_id, row]) => ({ org_id, minute, ...row }));
  if (values.length > 0) await t.ctx.db.insertInto('fleet_history').values(values).execute();
}

const history = (query: Record<string, string>, key?: string) =>
  t.request('GET', '/api/v2/fleet/history', { query, ...(key === undefined ? {} : { key }) });

beforeAll(async () => {
  t = await startTestApp({ env: { FLEET_HISTORY_RETENTION_DAYS: '7' } });
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  east = await org('East');
  eastChild = await org('East child', east);
  west = await org('West');
  eastOperator = await t.userWithRoles(['operator'], east);
  base = Math.floor((Date.now() - 2 * DAY) / HOUR) * HOUR;
  // The timeline, minute by minute from base: an outage in East from +2 to +4 (its child has one of its
  // own at +3), no snapshot at +6 and +7 (edgewatch down), and a minute at +8 in which East had no nodes.
  await seedMinute(base, { [east]: counts(0), [eastChild]: counts(0, 5), [west]: counts(0) });
  await seedMinute(base + MINUTE, { [east]: counts(0), [eastChild]: counts(0, 5), [west]: counts(0) });
  await seedMinute(base + 2 * MINUTE, { [east]: counts(3, 7), [eastChild]: counts(0, 5), [west]: counts(0) });
  await seedMinute(base + 3 * MINUTE, { [east]: counts(4, 6), [eastChild]: counts(2, 3), [west]: counts(0) });
  await seedMinute(base + 4 * MINUTE, { [east]: counts(1, 9), [eastChild]: counts(0, 5), [west]: counts(9) });
  await seedMinute(base + 5 * MINUTE, { [east]: counts(0), [eastChild]: counts(0, 5), [west]: counts(0) });
  await seedMinute(base + 8 * MINUTE, { [west]: counts(0) });
});
afterAll(async () => {
  await t.close();
});

describe('GET /api/v2/fleet/history against a seeded timeline', () => {
  it('gives one point a minute: the organization and those below it summed, gaps as null', async () => {
    const res = await history(
      { org_id: east, from: iso(base), to: iso(base + 10 * MINUTE), step: '1m' },
      eastOperator.key,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      org_id: east,
      from: iso(base),
      to: iso(base + 10 * MINUTE),
      step_seconds: 60,
    });
    const points = res.body.points as Record<string, unknown>[];
    expect(points.map((point) => point.at)).toEqual(
      Array.from({ length: 10 }, (_, i) => iso(base + i * MINUTE)),
    );
    expect(points.map((point) => point.unreachable)).toEqual([0, 0, 3, 6, 1, 0, null, null, 0, null]);
    expect(points.map((point) => point.alive)).toEqual([15, 15, 12, 9, 14, 15, null, null, 0, null]);
    expect(points[3]).toEqual({
      at: iso(base + 3 * MINUTE),
      alive: 9,
      unreachable: 6,
      new: 2,
      tunnels_unhealthy: 4,
      tunnels_unknown: 6,
      services_unhealthy: 0,
      services_unknown: 18,
    });
  });

  it('counts only the organization itself with include_child=false', async () => {
    const res = await history({
      org_id: east,
      include_child: 'false',
      from: iso(base),
      to: iso(base + 6 * MINUTE),
      step: '1m',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.points.map((point: { unreachable: number }) => point.unreachable)).toEqual([
      0, 0, 3, 4, 1, 0,
    ]);
  });

  it('takes the worst minute of each series within a step: the fewest alive, the most unreachable', async () => {
    const res = await history({ org_id: east, from: iso(base), to: iso(base + 10 * MINUTE), step: '5m' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.points).toEqual([
      expect.objectContaining({ at: iso(base), alive: 9, unreachable: 6, tunnels_unknown: 6 }),
      // One snapshot (+8, East without nodes) in the second step: zeros, not a gap.
      expect.objectContaining({ at: iso(base + 5 * MINUTE), alive: 0, unreachable: 0 }),
    ]);
    const seconds = await history({
      org_id: west,
      from: iso(base),
      to: iso(base + 10 * MINUTE),
      step: '300',
    });
    expect(seconds.body.points.map((point: { unreachable: number }) => point.unreachable)).toEqual([9, 0]);
  });

  it('rounds from down to a step, so the points do not move as time passes', async () => {
    const res = await history({
      org_id: west,
      from: iso(base + 2 * MINUTE + 30_000),
      to: iso(base + 9 * MINUTE),
      step: '2m',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.points.map((point: { at: string }) => point.at)).toEqual(
      [2, 4, 6, 8].map((m) => iso(base + m * MINUTE)),
    );
    expect(res.body.points.map((point: { unreachable: number | null }) => point.unreachable)).toEqual([
      0,
      9,
      null,
      0,
    ]);
  });

  it('defaults to the last 24 hours, at a step that keeps within 2,000 points', async () => {
    const res = await history({});
    expect(res.status, res.text).toBe(200);
    expect(res.body.org_id).toBe(root);
    expect(res.body.step_seconds).toBe(60);
    expect(Date.parse(res.body.to) - Date.parse(res.body.from)).toBe(DAY);
    expect(res.body.points.length).toBeGreaterThanOrEqual(1_440);
    const week = await history({ from: iso(Date.now() - 7 * DAY) });
    expect(week.status, week.text).toBe(200);
    expect(week.body.step_seconds).toBe(360);
    expect(week.body.points.length).toBeLessThanOrEqual(2_000);
  });
});

describe('visibility', () => {
  it("answers 404 for another organization's history, and an unknown one", async () => {
    expectError(await history({ org_id: west }, eastOperator.key), 404, 'NOT_FOUND');
    expectError(await history({ org_id: root }, eastOperator.key), 404, 'NOT_FOUND');
    expectError(await history({ org_id: 'no-such-org' }), 404, 'NOT_FOUND');
  });

  it("gives a caller its own organization's history by default, never another's counts", async () => {
    const res = await history(
      { from: iso(base + 4 * MINUTE), to: iso(base + 5 * MINUTE), step: '1m' },
      eastOperator.key,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.org_id).toBe(east);
    // West's 9 unreachable at that minute are not East's.
    expect(res.body.points).toEqual([expect.objectContaining({ unreachable: 1 })]);
  });
});

describe('bad input', () => {
  const now = Date.now();
  const cases: [string, Record<string, string>, string][] = [
    ['from after to', { from: iso(now), to: iso(now - HOUR) }, 'from'],
    ['from equal to to', { from: iso(now), to: iso(now) }, 'from'],
    ['an unparseable from', { from: 'yesterday' }, 'from'],
    ['an unparseable to', { to: '2024-13-45T99:00:00Z' }, 'to'],
    ['a time past the year 9999', { from: '9999999999999999', to: '9999999999999999' }, 'to'],
    ['a step of no minutes', { step: '0m' }, 'step'],
    ['a step of part of a minute', { step: '90' }, 'step'],
    ['a step in days', { step: '1d' }, 'step'],
    ['a step longer than a day', { step: '25h' }, 'step'],
    ['a step that is not a duration', { step: 'fast' }, 'step'],
    ['too many points', { from: iso(now - 30 * DAY), to: iso(now), step: '1m' }, 'step'],
    ['a range no step can hold', { from: '0', to: iso(now) }, 'step'],
  ];
  it.each(cases)('%s → 400 naming the field', async (_name, query, field) => {
    const res = await history(query);
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it('says which step would fit when there are too many points', async () => {
    const res = await history({ from: iso(now - 30 * DAY), to: iso(now), step: '1m' });
    expect(res.body.message).toContain('at least 22m');
  });

  it('refuses an unknown parameter', async () => {
    expectError(await history({ org: east }), 400, 'BAD_REQUEST');
  });
});

describe('the per-minute snapshot', () => {
  it('is a periodic job of the queue, every minute', () => {
    const handler = jobHandlers(t.ctx).find((candidate) => candidate.kind === FLEET_SNAPSHOT);
    expect(handler?.everyMs).toBe(MINUTE);
  });

  it("counts each organization's own nodes, and their tunnels and services unhealthy or unknown", async () => {
    const north = await org('North');
    const northChild = await org('North child', north);
    const report = (tunnel: string, service: string) => ({
      tunnels: [{ key: 't', name: 'T', state: tunnel }],
      services: [
        { key: 's1', name: 'S1', status: service },
        { key: 's2', name: 'S2', status: 'HEALTHY' },
      ],
    });
    await aliveNode(t, 'n-good', { orgId: north, report: report('CONNECTED', 'HEALTHY') });
    await aliveNode(t, 'n-bad', { orgId: north, report: report('TERMINATED', 'UNHEALTHY') });
    const gone = await aliveNode(t, 'n-gone', { orgId: north, report: report('CONNECTED', 'TERMINATED') });
    await t.request('POST', '/api/v1/node', { body: { name: 'n-new', create_under: north } });
    await aliveNode(t, 'c-bad', { orgId: northChild, report: report('TERMINATED', 'HEALTHY') });
    // Only this node falls silent: its last report moves back ten minutes before the sweep judges.
    await t.ctx.db
      .updateTable('nodes')
      .set((eb) => ({ last_seen_at: eb('last_seen_at', '-', 10 * MINUTE) }))
      .where('id', '=', gone.id)
      .execute();
    await silence(t, gone.id);

    const minute = Math.floor((Date.now() - DAY) / MINUTE) * MINUTE;
    expect(await takeSnapshot({ ...t.ctx, clock: { now: () => minute + 42_000 } })).toBe(true);
    const rows = await t.ctx.db
      .selectFrom('fleet_history')
      .selectAll()
      .where('minute', '=', minute)
      .where('org_id', 'in', [north, northChild])
      .execute();
    const byOrg = new Map(rows.map(({ org_id, minute: _m, ...row }) => [org_id, row]));
    expect(Object.fromEntries(Object.entries(byOrg.get(north)!).map(([k, v]) => [k, Number(v)]))).toEqual({
      nodes_alive: 2,
      nodes_unreachable: 1,
      nodes_new: 1,
      tunnels_unhealthy: 1,
      tunnels_unknown: 1,
      services_unhealthy: 1,
      services_unknown: 2,
    });
    expect(Number(byOrg.get(northChild)!.tunnels_unhealthy)).toBe(1);

    const res = await history({ org_id: north, from: iso(minute), to: iso(minute + MINUTE) });
    expect(res.body.points).toEqual([
      {
        at: iso(minute),
        alive: 3,
        unreachable: 1,
        new: 1,
        tunnels_unhealthy: 2,
        tunnels_unknown: 1,
        services_unhealthy: 1,
        services_unknown: 2,
      },
    ]);

    // The present minute is the fleet counted now, whether or not its snapshot (taken when the test app
    // started, before these nodes existed) is stored.
    const present = await history({ org_id: north, from: iso(Date.now() - 5 * MINUTE), step: '1m' });
    expect(present.body.points.at(-1)).toMatchObject({
      alive: 3,
      unreachable: 1,
      new: 1,
      tunnels_unhealthy: 2,
      tunnels_unknown: 1,
      services_unhealthy: 1,
      services_unknown: 2,
    });
  });

  it('stores a minute once when two snapshots of it race: the second writes nothing', async () => {
    const minute = Math.floor((Date.now() - DAY) / MINUTE) * MINUTE + 5 * MINUTE;
    const ctx = { ...t.ctx, clock: { now: () => minute + 1_000 } };
    let second: boolean | undefined;
    // The first has counted and is about to write when the second takes the same minute from start to end.
    const first = await takeSnapshot(ctx, {
      beforeWrite: async () => {
        second = await takeSnapshot(ctx);
      },
    });
    expect(second).toBe(true);
    expect(first).toBe(false);
    // And once more afterwards, as a retry would.
    expect(await takeSnapshot(ctx)).toBe(false);
    const rows = await t.ctx.db
      .selectFrom('fleet_history')
      .select(['org_id', 'nodes_alive'])
      .where('minute', '=', minute)
      .execute();
    expect(new Set(rows.map((row) => row.org_id)).size).toBe(rows.length);
    const res = await history({ from: iso(minute), to: iso(minute + MINUTE) });
    const nodes = await t.request('GET', '/api/v2/node', { query: { node_state: 'ALIVE', size: '1' } });
    expect(res.body.points[0].alive).toBe(nodes.body.total_count);
  });

  it('runs as the service starts, and the retention task prunes minutes past FLEET_HISTORY_RETENTION_DAYS', async () => {
    await t.jobsSettled();
    const recent = await t.ctx.db
      .selectFrom('fleet_history_minutes')
      .select('minute')
      .where('minute', '>', Date.now() - HOUR)
      .execute();
    expect(recent.length).toBeGreaterThanOrEqual(1);
    const old = Date.now() - 8 * DAY;
    await seedMinute(Math.floor(old / MINUTE) * MINUTE, { [west]: counts(0) });
    expect(await t.ctx.jobs.reschedule(t.ctx.db, PRUNE_RETENTION, PERIODIC_KEY, Date.now())).toBe(true);
    await t.jobsSettled();
    const left = await t.ctx.db
      .selectFrom('fleet_history')
      .select('minute')
      .where('minute', '<', Date.now() - 7 * DAY)
      .execute();
    expect(left).toEqual([]);
    const kept = await history({ org_id: east, from: iso(base), to: iso(base + MINUTE), step: '1m' });
    expect(kept.body.points[0].unreachable).toBe(0);
  });
});
