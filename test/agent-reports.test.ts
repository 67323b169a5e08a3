import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOfNode } from '../src/features/fleet/events/repo.js';
import { expectError } from './support/error-shape.js';
import { ADMIN_KEY, startTestApp, type TestApp, type TestResponse } from './support/harness.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function registerNode(name: string): Promise<{ id: string; token: string }> {
  const res = await t.request('POST', '/api/v1/node', { body: { name } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id as string, token: res.body.token as string };
}

function report(
  token: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  return t.request('POST', '/api/v1/agent/report', {
    key: null,
    headers: { ...(token === null ? {} : { 'x-node-token': token }), ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

async function events(nodeId: string) {
  return (await eventsOfNode(t.ctx.db, nodeId)).map((event) => ({
    type: event.type,
    condition: event.condition,
    kind: event.resource_kind,
    name: event.resource_name,
    previous: event.previous_state,
    current: event.current_state,
    sequence: event.sequence,
  }));
}

async function fleetSnapshot() {
  const [nodes, tunnels, services, fleetEvents] = await Promise.all([
    t.ctx.db.selectFrom('nodes').selectAll().orderBy('id').execute(),
    t.ctx.db.selectFrom('tunnels').selectAll().orderBy('id').execute(),
    t.ctx.db.selectFrom('services').selectAll().orderBy('id').execute(),
    t.ctx.db.selectFrom('fleet_events').selectAll().orderBy('id').execute(),
  ]);
  return { nodes, tunnels, services, fleetEvents };
}

describe('POST /api/v1/agent/report', () => {
  it('makes a NEW node ALIVE on an empty heartbeat, with one NODE_STATE_CHANGE event', async () => {
    const node = await registerNode('heartbeat');
    const res = await report(node.token);
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({ node_state: 'ALIVE', report_interval_s: 30 });
    const read = await t.request('GET', `/api/v1/node/${node.id}`);
    expect(read.body.node_state).toBe('ALIVE');
    expect(read.body.last_seen_at).toEqual(expect.any(String));
    expect(await events(node.id)).toEqual([
      {
        type: 'NODE_STATE_CHANGE',
        condition: 'ALIVE',
        kind: 'node',
        name: 'heartbeat',
        previous: 'NEW',
        current: 'ALIVE',
        sequence: 1,
      },
    ]);
    // A report that changes nothing makes no event.
    expect((await report(node.token, {})).status).toBe(200);
    expect(await events(node.id)).toHaveLength(1);
  });

  it('stores tunnels and services, and makes an event for each first sighting and each change', async () => {
    const node = await registerNode('resources');
    await report(node.token, {
      tunnels: [{ key: 'uplink', name: 'Uplink', state: 'CONNECTED' }],
      services: [
        { key: 'agent', name: 'Metrics agent', status: 'HEALTHY' },
        { key: 'db', name: 'Database', status: 'HEALTHY' },
      ],
    });
    await report(node.token, {
      tunnels: [{ key: 'uplink', name: 'Uplink', state: 'TERMINATED' }],
      services: [{ key: 'db', name: 'Database (renamed)', status: 'HEALTHY' }],
    });
    await report(node.token, { services: [{ key: 'agent', name: 'Metrics agent', status: 'UNHEALTHY' }] });

    const list = (await events(node.id)).filter((event) => event.kind !== 'node');
    expect(list).toEqual(
      expect.arrayContaining([
        {
          type: 'TUNNEL_STATE_CHANGE',
          condition: 'CONNECTED',
          kind: 'tunnel',
          name: 'Uplink',
          previous: null,
          current: 'CONNECTED',
          sequence: 1,
        },
        {
          type: 'TUNNEL_STATE_CHANGE',
          condition: 'TERMINATED',
          kind: 'tunnel',
          name: 'Uplink',
          previous: 'CONNECTED',
          current: 'TERMINATED',
          sequence: 2,
        },
        {
          type: 'SERVICE_STATE_CHANGE',
          condition: 'HEALTHY',
          kind: 'service',
          name: 'Metrics agent',
          previous: null,
          current: 'HEALTHY',
          sequence: 1,
        },
        {
          type: 'SERVICE_STATE_CHANGE',
          condition: 'HEALTHY',
          kind: 'service',
          name: 'Database',
          previous: null,
          current: 'HEALTHY',
          sequence: 1,
        },
        {
          type: 'SERVICE_STATE_CHANGE',
          condition: 'UNHEALTHY',
          kind: 'service',
          name: 'Metrics agent',
          previous: 'HEALTHY',
          current: 'UNHEALTHY',
          sequence: 2,
        },
      ]),
    );
    expect(list).toHaveLength(5);
    const read = await t.request('GET', `/api/v1/node/${node.id}`);
    expect(read.body.tunnels).toEqual({ CONNECTED: 0, TERMINATED: 1 });
    expect(read.body.services).toEqual({ HEALTHY: 1, UNHEALTHY: 1, TERMINATED: 0 });
    const db = await t.ctx.db
      .selectFrom('services')
      .select(['key', 'name'])
      .where('node_id', '=', node.id)
      .orderBy('key')
      .execute();
    expect(db).toEqual([
      { key: 'agent', name: 'Metrics agent' },
      { key: 'db', name: 'Database (renamed)' },
    ]);
  });

  it('makes NODE_IP_CHANGE events when a stored address changes, not on the first report', async () => {
    const node = await registerNode('addresses');
    await report(node.token, {
      addresses: [
        { type: 'InternalIP', address: '10.0.0.5' },
        { type: 'ExternalIP', address: '203.0.113.10' },
      ],
    });
    await report(node.token, {
      addresses: [
        { type: 'InternalIP', address: '10.0.0.5' },
        { type: 'ExternalIP', address: '203.0.113.24' },
      ],
    });
    const ip = (await events(node.id)).filter((event) => event.type === 'NODE_IP_CHANGE');
    expect(ip).toEqual([
      {
        type: 'NODE_IP_CHANGE',
        condition: 'PUBLIC_IP',
        kind: 'node',
        name: 'addresses',
        previous: '203.0.113.10',
        current: '203.0.113.24',
        sequence: 2,
      },
    ]);
    const read = await t.request('GET', `/api/v1/node/${node.id}`);
    expect(read.body.status.node.addresses).toEqual([
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'ExternalIP', address: '203.0.113.24' },
    ]);
  });

  it('stores version, certificate and upgrade status; a changed status is a NODE_UPGRADE event', async () => {
    const node = await registerNode('upgrades');
    await report(node.token, {
      software_version: '4.2.0',
      upgrade: { status: 'ENABLED' },
      certificate: { not_before: '2026-01-01T00:00:00Z', not_after: '2036-01-01T00:00:00Z' },
    });
    await report(node.token, { software_version: '4.3.1', upgrade: { status: 'SUCCESSFUL' } });
    const read = await t.request('GET', `/api/v1/node/${node.id}`);
    expect(read.body).toMatchObject({
      status: { node: { info: { version: { software_version: '4.3.1' } } } },
      upgrade: { status: 'SUCCESSFUL' },
      certificate: { not_before: '2026-01-01T00:00:00.000Z', not_after: '2036-01-01T00:00:00.000Z' },
    });
    expect((await events(node.id)).filter((event) => event.type === 'NODE_UPGRADE')).toEqual([
      {
        type: 'NODE_UPGRADE',
        condition: 'SUCCESSFUL',
        kind: 'node',
        name: 'upgrades',
        previous: '4.2.0',
        current: '4.3.1',
        sequence: 2,
      },
    ]);
  });

  it('answers 401 without a node token, with an unknown or replaced one, and with a user key', async () => {
    const node = await registerNode('auth');
    expectError(await report(null), 401, 'UNAUTHORIZED');
    expectError(await report('ewn_not-a-token'), 401, 'UNAUTHORIZED');
    expectError(await report(null, {}, { 'x-api-key': ADMIN_KEY }), 401, 'UNAUTHORIZED');
    expectError(await report(ADMIN_KEY), 401, 'UNAUTHORIZED');
    const renewed = await t.request('POST', `/api/v1/node/${node.id}/token`);
    expectError(await report(node.token), 401, 'UNAUTHORIZED');
    expect((await report(renewed.body.token as string)).status).toBe(200);
  });

  it('answers 429 with Retry-After past 10 reports a second from one node', async () => {
    const node = await registerNode('chatty');
    const answers = [];
    for (let i = 0; i < 12; i += 1) answers.push(await report(node.token));
    expect(answers.slice(0, 10).every((res) => res.status === 200)).toBe(true);
    const refused = answers[11]!;
    expectError(refused, 429, 'TOO_MANY_REQUESTS');
    expect(refused.headers['retry-after']).toBe('1');
  });

  const tunnels = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ key: `t${i}`, name: `T${i}`, state: 'CONNECTED' }));
  const bad: [string, unknown][] = [
    ['an unknown field', { colour: 'blue' }],
    ['a tunnel state of another vocabulary', { tunnels: [{ key: 'a', name: 'A', state: 'DISCONNECTED' }] }],
    ['a service status in lower case', { services: [{ key: 'a', name: 'A', status: 'healthy' }] }],
    ['257 tunnels', { tunnels: tunnels(257) }],
    ['one key twice', { tunnels: [...tunnels(1), ...tunnels(1)] }],
    ['a tunnel without a key', { tunnels: [{ name: 'A', state: 'CONNECTED' }] }],
    ['a huge name', { services: [{ key: 'a', name: 'n'.repeat(10_000), status: 'HEALTHY' }] }],
    ['an address that is not an IP', { addresses: [{ type: 'InternalIP', address: 'router.local' }] }],
    [
      'two addresses of one type',
      {
        addresses: [
          { type: 'ExternalIP', address: '203.0.113.1' },
          { type: 'ExternalIP', address: '203.0.113.2' },
        ],
      },
    ],
    ['an unknown address type', { addresses: [{ type: 'Hostname', address: '203.0.113.1' }] }],
    [
      'a certificate that ends before it starts',
      { certificate: { not_before: '2027-01-01T00:00:00Z', not_after: '2026-01-01T00:00:00Z' } },
    ],
    [
      'a certificate date that is not a date',
      { certificate: { not_before: 'soon', not_after: '2026-01-01T00:00:00Z' } },
    ],
    ['an unknown upgrade status', { upgrade: { status: 'DONE' } }],
    ['a version as a number', { software_version: 4 }],
    [
      'an unknown peer node',
      {
        tunnels: [
          { key: 'p', name: 'P', state: 'CONNECTED', peer_node_id: '01900000-0000-7000-8000-000000000001' },
        ],
      },
    ],
    ['a JSON array', [1]],
  ];
  it.each(bad)('answers 400 for %s and stores nothing', async (_label, body) => {
    const node = await registerNode(`bad-${_label.slice(0, 40)}`);
    const before = await fleetSnapshot();
    expectError(await report(node.token, body), 400, 'BAD_REQUEST');
    expect(await fleetSnapshot()).toEqual(before);
  });
});
