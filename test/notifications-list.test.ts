import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/error-shape.js';
import { aliveNode, silence } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';

// The notification list and read: the caller's own, or (scope=org) everyone's in the caller's organizations;
// newest first, every filter, and the names of what each is about.
let t: TestApp;
let root: string;
let east: string;
let west: string;
let operator: { id: string; key: string };
let eastOperator: { id: string; key: string };
let reader: { key: string };
let eastNode: string;
let rootNode: string;
let westNode: string;
let stateAlert: string;
let eastAlert: string;

const report = { tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED' }] };

beforeAll(async () => {
  t = await startTestApp();
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  east = (await t.request('POST', '/api/v1/org', { body: { name: 'East' } })).body.id as string;
  west = (await t.request('POST', '/api/v1/org', { body: { name: 'West' } })).body.id as string;
  operator = await t.userWithRoles(['operator']);
  eastOperator = await t.userWithRoles(['operator'], east);
  reader = await t.userWithRoles(['read_only']);
  const alert = async (name: string, type: string, orgId = root, key?: string) => {
    const res = await t.request('POST', '/api/v1/mysubscriptions', {
      // One notification sent per event: this file is about the list, not grouping.
      body: { name, type, settings: { org_id: orgId, group_by: 'none' } },
      ...(key === undefined ? {} : { key }),
    });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  };
  stateAlert = await alert('States', 'NODE_STATE_CHANGE');
  await alert('Tunnels', 'TUNNEL_STATE_CHANGE');
  eastAlert = await alert('East states', 'NODE_STATE_CHANGE', east, eastOperator.key);
  eastNode = (await aliveNode(t, 'east-node', { orgId: east, report })).id;
  rootNode = (await aliveNode(t, 'root-node', { report })).id;
  westNode = (await aliveNode(t, 'west-node', { orgId: west, report })).id;
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

const nodesOf = (page: { results: any[] }) => new Set(page.results.map((n) => n.node.id));

// The administrator's alerts: ALIVE and tunnel CONNECTED for each of three nodes, UNREACHABLE for one (7).
// The East operator's alert: ALIVE and UNREACHABLE of the East node (2).
describe('GET /api/v2/notification', () => {
  it("lists the caller's notifications newest first, with their payload", async () => {
    const all = await list();
    expect(all.total_count).toBe(7);
    const created = all.results.map((n) => n.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    expect(all.results[0]).toMatchObject({
      status: 'delivered',
      channel_type: 'EMAIL',
      webhook_id: null,
      payload: { test: false, alert: { id: expect.any(String) } },
    });
    expect((await list('', operator.key)).total_count).toBe(0);
    expect((await list('?scope=mine', eastOperator.key)).total_count).toBe(2);
  });

  it('filters by type, node, organization, alert, status and time', async () => {
    expect((await list('?type=TUNNEL_STATE_CHANGE')).total_count).toBe(3);
    expect((await list(`?node_id=${eastNode}`)).total_count).toBe(3);
    expect((await list(`?org_id=${east}`)).total_count).toBe(3);
    expect((await list(`?org_id=${root}`)).total_count).toBe(7);
    expect((await list(`?alert_id=${stateAlert}`)).total_count).toBe(4);
    expect((await list(`?alert_id=${stateAlert}&node_id=${rootNode}`)).total_count).toBe(1);
    expect((await list('?status=held')).total_count).toBe(0);
    // Past the first 5 e-mails of a minute, the rest wait for the minute's digest.
    const delivered = (await list()).results.filter((n) => n.status === 'delivered').length;
    expect(delivered).toBeGreaterThanOrEqual(5);
    expect((await list('?status=delivered')).total_count).toBe(delivered);
    expect((await list('?end_date=0')).total_count).toBe(0);
    expect((await list('?start_date=2000-01-01T00:00:00Z')).total_count).toBe(7);
    expectError(await t.request('GET', '/api/v2/notification?start_date=soon'), 400, 'BAD_REQUEST');
    expectError(await t.request('GET', '/api/v2/notification?status=lost'), 400, 'BAD_REQUEST');
  });

  it('names the organization, the node, the tunnel or service, and the owner', async () => {
    const [tunnel] = (await list(`?type=TUNNEL_STATE_CHANGE&node_id=${eastNode}`)).results;
    expect(tunnel).toMatchObject({
      owner: { id: expect.any(String), name: 'Administrator' },
      organization: { id: east, name: 'East' },
      node: { id: eastNode, name: 'east-node' },
      resource: { kind: 'tunnel', id: tunnel.payload.resource.id, name: 'Uplink' },
    });
    const [state] = (await list(`?type=NODE_STATE_CHANGE&node_id=${rootNode}`)).results;
    expect(state).toMatchObject({
      organization: { id: root, name: 'Root organization' },
      node: { id: rootNode, name: 'root-node' },
      resource: null,
    });
    const [own] = (await list('', eastOperator.key)).results;
    expect(own.owner).toEqual({ id: eastOperator.id, name: expect.stringMatching(/^User /) });
  });
});

describe('GET /api/v2/notification?scope=org', () => {
  it("lists every user's notifications of the caller's organization and those below it", async () => {
    const everyone = await list('?scope=org');
    expect(everyone.total_count).toBe(9);
    const created = everyone.results.map((n) => n.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    expect(everyone.results.filter((n) => n.owner.id === eastOperator.id)).toHaveLength(2);
    expect((await list('?scope=org', operator.key)).total_count).toBe(9);
  });

  it("shows an Operator of a sub-organization only that organization's, never a sibling's or the parent's", async () => {
    const seen = await list('?scope=org&size=100', eastOperator.key);
    expect(seen.total_count).toBe(5);
    expect(new Set(seen.results.map((n) => n.organization.id))).toEqual(new Set([east]));
    expect(nodesOf(seen)).toEqual(new Set([eastNode]));
    expect((await list(`?scope=org&node_id=${westNode}`, eastOperator.key)).total_count).toBe(0);
    expect((await list(`?scope=org&node_id=${rootNode}`, eastOperator.key)).total_count).toBe(0);
    for (const outside of [root, west, 'no-such-org']) {
      expectError(
        await t.request('GET', `/api/v2/notification?scope=org&org_id=${outside}`, { key: eastOperator.key }),
        404,
        'NOT_FOUND',
      );
    }
  });

  it('combines with every filter', async () => {
    expect((await list(`?scope=org&org_id=${east}`)).total_count).toBe(5);
    expect((await list(`?scope=org&org_id=${west}`)).total_count).toBe(2);
    expect((await list('?scope=org&type=NODE_STATE_CHANGE')).total_count).toBe(6);
    expect((await list(`?scope=org&node_id=${eastNode}`)).total_count).toBe(5);
    expect((await list(`?scope=org&alert_id=${eastAlert}`)).total_count).toBe(2);
    expect((await list(`?scope=org&alert_id=${eastAlert}&org_id=${west}`)).total_count).toBe(0);
    const delivered = (await list('?scope=org')).results.filter((n) => n.status === 'delivered').length;
    expect((await list('?scope=org&status=delivered&start_date=2000-01-01T00:00:00Z')).total_count).toBe(
      delivered,
    );
    expect((await list('?scope=org&end_date=0')).total_count).toBe(0);
    const paged = await list('?scope=org&size=4&page=2');
    expect(paged).toMatchObject({ total_count: 9, results: [expect.any(Object)] });
  });

  it('is refused to a role without it, and a scope it does not know is a 400', async () => {
    const refused = await t.request('GET', '/api/v2/notification?scope=org', { key: reader.key });
    expectError(refused, 403, 'FORBIDDEN');
    expect(refused.body.message).toContain('org_notifications:read');
    expect((await list('', reader.key)).total_count).toBe(0);
    expectError(await t.request('GET', '/api/v2/notification?scope=all'), 400, 'BAD_REQUEST');
    expectError(await t.request('GET', `/api/v2/notification?scope=org&org_id=`), 400, 'BAD_REQUEST');
  });
});

describe('GET /api/v1/notification/:id', () => {
  it('reads one with its deliveries (none for e-mail), and hides others behind 404', async () => {
    const [first] = (await list()).results;
    const one = await t.request('GET', `/api/v1/notification/${first.id}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toStrictEqual({ ...first, deliveries: [] });
    expectError(
      await t.request('GET', `/api/v1/notification/${first.id}`, { key: reader.key }),
      404,
      'NOT_FOUND',
    );
    expectError(await t.request('GET', '/api/v1/notification/nope'), 404, 'NOT_FOUND');
  });

  it('reads what the scope=org list shows, and nothing outside it', async () => {
    const inEast = (await list(`?org_id=${east}`)).results[0];
    const inRoot = (await list(`?node_id=${rootNode}`)).results[0];
    const byEast = await t.request('GET', `/api/v1/notification/${inEast.id}`, { key: eastOperator.key });
    expect(byEast.status, byEast.text).toBe(200);
    expect(byEast.body).toStrictEqual({ ...inEast, deliveries: [] });
    expectError(
      await t.request('GET', `/api/v1/notification/${inRoot.id}`, { key: eastOperator.key }),
      404,
      'NOT_FOUND',
    );
    const [theirs] = (await list('', eastOperator.key)).results;
    const byRoot = await t.request('GET', `/api/v1/notification/${theirs.id}`, { key: operator.key });
    expect(byRoot.status, byRoot.text).toBe(200);
  });
});

describe('names at read time', () => {
  it('shows a renamed node by its new name and a node that is gone by its last one', async () => {
    const renamed = await t.request('PUT', `/api/v1/node/${rootNode}`, { body: { name: 'root-renamed' } });
    expect(renamed.status, renamed.text).toBe(200);
    const [now] = (await list(`?node_id=${rootNode}`)).results;
    expect(now.node).toEqual({ id: rootNode, name: 'root-renamed' });
    expect(now.payload.node.name).toBe('root-node');

    const gone = (await aliveNode(t, 'short-lived', { orgId: west, report })).id;
    await t.jobsSettled();
    expect((await t.request('DELETE', `/api/v1/node/${gone}`)).status).toBe(200);
    const left = await list(`?node_id=${gone}&type=TUNNEL_STATE_CHANGE`);
    expect(left.total_count).toBe(1);
    expect(left.results[0]).toMatchObject({
      organization: { id: west, name: 'West' },
      node: { id: gone, name: 'short-lived' },
      resource: { kind: 'tunnel', name: 'Uplink' },
    });
  });
});
