import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/error-shape.js';
import { aliveNode, silence } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';

// The notification list and read: the caller's own only, newest first, every filter.
let t: TestApp;
let root: string;
let east: string;
let operator: { key: string };
let eastNode: string;
let rootNode: string;
let stateAlert: string;

beforeAll(async () => {
  t = await startTestApp();
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  east = (await t.request('POST', '/api/v1/org', { body: { name: 'East' } })).body.id as string;
  operator = await t.userWithRoles(['operator']);
  const alert = async (name: string, type: string) =>
    (
      await t.request('POST', '/api/v1/mysubscriptions', {
        body: { name, type, settings: { org_id: root } },
      })
    ).body.id as string;
  stateAlert = await alert('States', 'NODE_STATE_CHANGE');
  await alert('Tunnels', 'TUNNEL_STATE_CHANGE');
  const report = { tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED' }] };
  eastNode = (await aliveNode(t, 'east-node', { orgId: east, report })).id;
  rootNode = (await aliveNode(t, 'root-node', { report })).id;
  await silence(t, eastNode);
  await t.jobsSettled();
});
afterAll(async () => {
  await t.close();
});

const list = async (query = '', key?: string) => {
  const res = await t.request('GET', `/api/v2/notification${query}`, key === undefined ? {} : { key });
  expect(res.status, res.text).toBe(200);
  return res.body as { total_count: number; results: any[] };
};

describe('GET /api/v2/notification', () => {
  it("lists the caller's notifications newest first, with their payload", async () => {
    const all = await list();
    // ALIVE and tunnel CONNECTED for both nodes, UNREACHABLE for one.
    expect(all.total_count).toBe(5);
    const created = all.results.map((n) => n.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    expect(all.results[0]).toMatchObject({
      status: 'delivered',
      channel_type: 'EMAIL',
      webhook_id: null,
      payload: { test: false, alert: { id: expect.any(String) } },
    });
    expect((await list('', operator.key)).total_count).toBe(0);
  });

  it('filters by type, node, organization, alert, status and time', async () => {
    expect((await list('?type=TUNNEL_STATE_CHANGE')).total_count).toBe(2);
    expect((await list(`?node_id=${eastNode}`)).total_count).toBe(3);
    expect((await list(`?org_id=${east}`)).total_count).toBe(3);
    expect((await list(`?org_id=${root}`)).total_count).toBe(5);
    expect((await list(`?alert_id=${stateAlert}`)).total_count).toBe(3);
    expect((await list(`?alert_id=${stateAlert}&node_id=${rootNode}`)).total_count).toBe(1);
    expect((await list('?status=held')).total_count).toBe(0);
    expect((await list('?status=delivered')).total_count).toBe(5);
    expect((await list('?end_date=0')).total_count).toBe(0);
    expect((await list('?start_date=2000-01-01T00:00:00Z')).total_count).toBe(5);
    expectError(await t.request('GET', '/api/v2/notification?start_date=soon'), 400, 'BAD_REQUEST');
    expectError(await t.request('GET', '/api/v2/notification?status=lost'), 400, 'BAD_REQUEST');
  });
});

describe('GET /api/v1/notification/:id', () => {
  it('reads one with its deliveries (none for e-mail), and hides others behind 404', async () => {
    const [first] = (await list()).results;
    const one = await t.request('GET', `/api/v1/notification/${first.id}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual({ ...first, deliveries: [] });
    expectError(
      await t.request('GET', `/api/v1/notification/${first.id}`, { key: operator.key }),
      404,
      'NOT_FOUND',
    );
    expectError(await t.request('GET', '/api/v1/notification/nope'), 404, 'NOT_FOUND');
  });
});
