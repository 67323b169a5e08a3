import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/error-shape.js';
import { startTestApp, type TestApp } from './support/harness.js';

let t: TestApp;
let east: string;
let west: string;
let eastNode: string;
let westNode: string;
let eastOperator: { key: string };
let before: number;

async function node(name: string, orgId: string, reports: unknown[]): Promise<string> {
  const created = await t.request('POST', '/api/v1/node', { body: { name, create_under: orgId } });
  expect(created.status, created.text).toBe(201);
  for (const body of reports) {
    const res = await t.request('POST', '/api/v1/agent/report', {
      key: null,
      headers: { 'x-node-token': created.body.token as string },
      body,
    });
    expect(res.status, res.text).toBe(200);
  }
  return created.body.id as string;
}

beforeAll(async () => {
  t = await startTestApp();
  before = Date.now() - 1;
  east = (await t.request('POST', '/api/v1/org', { body: { name: 'East' } })).body.id as string;
  west = (await t.request('POST', '/api/v1/org', { body: { name: 'West' } })).body.id as string;
  eastOperator = await t.userWithRoles(['operator'], east);
  eastNode = await node('east-1', east, [
    { tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED' }] },
    { tunnels: [{ key: 'up', name: 'Uplink', state: 'TERMINATED' }] },
  ]);
  westNode = await node('west-1', west, [{ services: [{ key: 's', name: 'Svc', status: 'HEALTHY' }] }]);
});
afterAll(async () => {
  await t.close();
});

describe('GET /api/v2/event', () => {
  it('lists events newest first with their organization, node and resource', async () => {
    const res = await t.request('GET', `/api/v2/event?node_id=${eastNode}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.total_count).toBe(3);
    const [newest] = res.body.results;
    expect(newest).toMatchObject({
      type: 'TUNNEL_STATE_CHANGE',
      condition: 'TERMINATED',
      organization: { id: east, name: 'East' },
      node: { id: eastNode, name: 'east-1' },
      resource: { kind: 'tunnel', name: 'Uplink' },
      previous_state: 'CONNECTED',
      current_state: 'TERMINATED',
      sequence: 2,
    });
    expect(newest.occurred_at).toMatch(/Z$/);
    const times = res.body.results.map((event: { occurred_at: string }) => event.occurred_at);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('filters by type, resource kind and time (ISO 8601 or epoch ms)', async () => {
    const types = await t.request('GET', '/api/v2/event?type=NODE_STATE_CHANGE&size=100');
    expect(types.body.results.every((event: { type: string }) => event.type === 'NODE_STATE_CHANGE')).toBe(
      true,
    );
    expect(types.body.total_count).toBeGreaterThanOrEqual(2);
    const services = await t.request('GET', '/api/v2/event?resource_kind=service');
    expect(services.body.results.map((event: { node: { id: string } }) => event.node.id)).toEqual([westNode]);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await t.request('GET', `/api/v2/event?start_date=${later}`)).body.total_count).toBe(0);
    const since = await t.request(
      'GET',
      `/api/v2/event?start_date=${before}&end_date=${Date.now() + 1}&size=100`,
    );
    expect(since.body.total_count).toBe((await t.request('GET', '/api/v2/event?size=100')).body.total_count);
  });

  it("shows a caller only the events of the caller's organizations", async () => {
    const mine = await t.request('GET', '/api/v2/event?size=100', { key: eastOperator.key });
    const nodes = new Set(mine.body.results.map((event: { node: { id: string } }) => event.node.id));
    expect([...nodes]).toEqual([eastNode]);
    expectError(
      await t.request('GET', `/api/v2/event?org_id=${west}`, { key: eastOperator.key }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await t.request('GET', `/api/v2/event?node_id=${westNode}`, { key: eastOperator.key }),
      404,
      'NOT_FOUND',
    );
  });

  it.each(['start_date=yesterday', 'end_date=2026-13-45T00:00:00Z', 'type=DISK_FULL', 'resource_kind=pod'])(
    'answers 400 for ?%s',
    async (query) => {
      expectError(await t.request('GET', `/api/v2/event?${query}`), 400, 'BAD_REQUEST');
    },
  );
});
