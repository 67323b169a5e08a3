import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_STATE_CHANGES } from '../src/features/fleet/availability/service.js';
import { newId } from '../src/lib/ids.js';
import { expectError } from './support/error-shape.js';
import { aliveNode, silence } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let t: TestApp;
let east: string;
let west: string;
let eastOperator: { key: string };
let node: string;
let orgOfNode: string;
/** An hour two days ago, when the node was registered. */
let base: number;
let sequence = 0;

const iso = (at: number) => new Date(at).toISOString();

async function registered(name: string, orgId: string, createdAt: number): Promise<string> {
  const res = await t.request('POST', '/api/v1/node', { body: { name, create_under: orgId } });
  expect(res.status, res.text).toBe(201);
  const id = res.body.id as string;
  await t.ctx.db.updateTable('nodes').set({ created_at: createdAt }).where('id', '=', id).execute();
  return id;
}

function event(nodeId: string, at: number, previous: string, current: string, type = 'NODE_STATE_CHANGE') {
  sequence += 1;
  return {
    id: newId(at),
    type,
    condition: current,
    org_id: orgOfNode,
    node_id: nodeId,
    resource_kind: 'node',
    resource_id: nodeId,
    resource_name: 'n',
    previous_state: previous,
    current_state: current,
    sequence,
    occurred_at: at,
    detected_at: at,
  };
}

const availability = (id: string, query: Record<string, string>, key?: string) =>
  t.request('GET', `/api/v1/node/${id}/availability`, { query, ...(key === undefined ? {} : { key }) });

const band = (state: string, from: number, to: number) => ({ state, from: iso(from), to: iso(to) });

beforeAll(async () => {
  t = await startTestApp({ env: { EVENT_RETENTION_DAYS: '30' } });
  east = (await t.request('POST', '/api/v1/org', { body: { name: 'East' } })).body.id as string;
  west = (await t.request('POST', '/api/v1/org', { body: { name: 'West' } })).body.id as string;
  eastOperator = await t.userWithRoles(['operator'], east);
  orgOfNode = east;
  base = Math.floor((Date.now() - 2 * DAY) / HOUR) * HOUR;
  node = await registered('timeline', east, base);
  // NEW until +1 h; ALIVE; UNREACHABLE from +5 h to +6 h and from +10 h to +12 h; ALIVE since.
  await t.ctx.db
    .insertInto('fleet_events')
    .values([
      event(node, base + HOUR, 'NEW', 'ALIVE'),
      event(node, base + 3 * HOUR, '10.0.0.1', '10.0.0.2', 'NODE_IP_CHANGE'),
      event(node, base + 5 * HOUR, 'ALIVE', 'UNREACHABLE'),
      event(node, base + 6 * HOUR, 'UNREACHABLE', 'ALIVE'),
      event(node, base + 10 * HOUR, 'ALIVE', 'UNREACHABLE'),
      event(node, base + 12 * HOUR, 'UNREACHABLE', 'ALIVE'),
    ])
    .execute();
  await t.ctx.db.updateTable('nodes').set({ node_state: 'ALIVE' }).where('id', '=', node).execute();
});
afterAll(async () => {
  await t.close();
});

describe('GET /api/v1/node/:id/availability against a seeded timeline', () => {
  it('gives the day as bands and the uptime over the time the node was watched', async () => {
    const res = await availability(node, { from: iso(base), to: iso(base + DAY) }, eastOperator.key);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      from: iso(base),
      to: iso(base + DAY),
      known_from: iso(base),
      known_to: iso(base + DAY),
      // ALIVE 20 h of the 23 h after the first report; the NEW hour counts neither way.
      uptime_percent: 86.96,
      bands: [
        band('NEW', base, base + HOUR),
        band('ALIVE', base + HOUR, base + 5 * HOUR),
        band('UNREACHABLE', base + 5 * HOUR, base + 6 * HOUR),
        band('ALIVE', base + 6 * HOUR, base + 10 * HOUR),
        band('UNREACHABLE', base + 10 * HOUR, base + 12 * HOUR),
        band('ALIVE', base + 12 * HOUR, base + DAY),
      ],
    });
  });

  it('starts a window in the state the next change left', async () => {
    const res = await availability(node, { from: iso(base + 5.5 * HOUR), to: iso(base + 11 * HOUR) });
    expect(res.body.bands).toEqual([
      band('UNREACHABLE', base + 5.5 * HOUR, base + 6 * HOUR),
      band('ALIVE', base + 6 * HOUR, base + 10 * HOUR),
      band('UNREACHABLE', base + 10 * HOUR, base + 11 * HOUR),
    ]);
    expect(res.body.uptime_percent).toBe(72.73);
    const quiet = await availability(node, { from: iso(base + 2 * HOUR), to: iso(base + 4 * HOUR) });
    expect(quiet.body.bands).toEqual([band('ALIVE', base + 2 * HOUR, base + 4 * HOUR)]);
    expect(quiet.body.uptime_percent).toBe(100);
  });

  it("ends at the node's state now when no change follows, and at now when to is later", async () => {
    const to = Date.now() + HOUR;
    const res = await availability(node, { from: iso(base + 13 * HOUR), to: iso(to) });
    expect(res.body.bands).toHaveLength(1);
    expect(res.body.bands[0]).toMatchObject({ state: 'ALIVE', from: iso(base + 13 * HOUR) });
    expect(Date.parse(res.body.known_to)).toBeLessThan(to - HOUR + 60_000);
    expect(res.body.bands[0].to).toBe(res.body.known_to);
  });

  it('knows nothing before the registration, nor before the events kept (EVENT_RETENTION_DAYS)', async () => {
    const early = await availability(node, { from: iso(base - 2 * HOUR), to: iso(base + 2 * HOUR) });
    expect(early.body.known_from).toBe(iso(base));
    expect(early.body.bands).toEqual([
      band('NEW', base, base + HOUR),
      band('ALIVE', base + HOUR, base + 2 * HOUR),
    ]);
    expect(early.body.uptime_percent).toBe(100);

    const old = await registered('old', east, Date.now() - 60 * DAY);
    const res = await availability(old, { from: iso(Date.now() - 40 * DAY), to: iso(Date.now() - 20 * DAY) });
    expect(res.status, res.text).toBe(200);
    expect(Math.abs(Date.parse(res.body.known_from) - (Date.now() - 30 * DAY))).toBeLessThan(60_000);
    const before = await availability(old, {
      from: iso(Date.now() - 40 * DAY),
      to: iso(Date.now() - 35 * DAY),
    });
    expect(before.body).toMatchObject({ known_from: null, known_to: null, uptime_percent: null, bands: [] });
  });

  it('defaults to the last 24 hours', async () => {
    const res = await availability(node, {});
    expect(res.status, res.text).toBe(200);
    expect(Date.parse(res.body.to) - Date.parse(res.body.from)).toBe(DAY);
    expect(res.body.bands).toEqual([
      expect.objectContaining({ state: 'ALIVE', from: res.body.from, to: res.body.known_to }),
    ]);
  });

  it('follows the liveness of a node that reports, then falls silent', async () => {
    const live = await aliveNode(t, 'live', { orgId: east });
    // Registered an hour ago, reported half an hour ago: the sweep's judgement then lies in the past too.
    const reported = Date.now() - HOUR / 2;
    await t.ctx.db
      .updateTable('nodes')
      .set({ created_at: Date.now() - HOUR, last_seen_at: reported })
      .where('id', '=', live.id)
      .execute();
    await t.ctx.db
      .updateTable('fleet_events')
      .set({ occurred_at: reported })
      .where('node_id', '=', live.id)
      .execute();
    await silence(t, live.id);
    const res = await availability(live.id, { from: iso(Date.now() - 2 * HOUR), to: iso(Date.now()) });
    expect(res.body.bands.map((b: { state: string }) => b.state)).toEqual(['NEW', 'ALIVE', 'UNREACHABLE']);
  });
});

describe('visibility and bad input', () => {
  it("answers 404 for another organization's node and an unknown one", async () => {
    orgOfNode = west;
    const westNode = await registered('west', west, base);
    expectError(await availability(westNode, {}, eastOperator.key), 404, 'NOT_FOUND');
    expectError(await availability('no-such-node', {}), 404, 'NOT_FOUND');
    orgOfNode = east;
  });

  const cases: [string, Record<string, string>, string][] = [
    ['from after to', { from: '2024-01-02T00:00:00Z', to: '2024-01-01T00:00:00Z' }, 'from'],
    ['an unparseable from', { from: 'last week' }, 'from'],
    ['a time past the year 9999', { to: '999999999999999' }, 'to'],
  ];
  it.each(cases)('%s → 400', async (_name, query, field) => {
    const res = await availability(node, query);
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it('refuses an unknown parameter, and a step (there is none)', async () => {
    expectError(await availability(node, { step: '1m' }), 400, 'BAD_REQUEST');
  });

  it(`refuses a range with more than ${MAX_STATE_CHANGES} changes, asking for a shorter one`, async () => {
    const flapping = await registered('flapping', east, base);
    const start = base + 13 * HOUR;
    const events = Array.from({ length: MAX_STATE_CHANGES + 1 }, (_, i) =>
      event(
        flapping,
        start + i * 1_000,
        i % 2 === 0 ? 'ALIVE' : 'UNREACHABLE',
        i % 2 === 0 ? 'UNREACHABLE' : 'ALIVE',
      ),
    );
    for (let i = 0; i < events.length; i += 1_000) {
      await t.ctx.db
        .insertInto('fleet_events')
        .values(events.slice(i, i + 1_000))
        .execute();
    }
    const res = await availability(flapping, { from: iso(start), to: iso(start + 4 * HOUR) });
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.message).toContain('shorter range');
    const shorter = await availability(flapping, { from: iso(start), to: iso(start + HOUR) });
    expect(shorter.status, shorter.text).toBe(200);
    expect(shorter.body.bands).toHaveLength(3_600);
  });
});
