import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/error-shape.js';
import { silence } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';

let t: TestApp;
let east: string;
let eastNode: { id: string; token: string };
let westNode: { id: string; token: string };
let eastOperator: { key: string };
let reader: { key: string };

async function node(name: string, orgId?: string) {
  const res = await t.request('POST', '/api/v1/node', {
    body: { name, ...(orgId === undefined ? {} : { create_under: orgId }) },
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id as string, token: res.body.token as string };
}

async function report(token: string, body: unknown) {
  const res = await t.request('POST', '/api/v1/agent/report', {
    key: null,
    headers: { 'x-node-token': token },
    body,
  });
  expect(res.status, res.text).toBe(200);
}

beforeAll(async () => {
  t = await startTestApp();
  east = (await t.request('POST', '/api/v1/org', { body: { name: 'East' } })).body.id as string;
  const west = (await t.request('POST', '/api/v1/org', { body: { name: 'West' } })).body.id as string;
  eastOperator = await t.userWithRoles(['operator'], east);
  reader = await t.userWithRoles(['read_only']);
  eastNode = await node('east-1', east);
  westNode = await node('west-1', west);
  await report(eastNode.token, {
    tunnels: [
      { key: 'b', name: 'Backup', state: 'TERMINATED', peer_node_id: westNode.id },
      { key: 'a', name: 'Uplink', state: 'CONNECTED' },
    ],
    services: [{ key: 'm', name: 'Metrics', status: 'UNHEALTHY' }],
  });
  await report(westNode.token, { tunnels: [{ key: 'w', name: 'West link', state: 'CONNECTED' }] });
});
afterAll(async () => {
  await t.close();
});

describe('GET /api/v2/tunnel and /api/v2/service', () => {
  it('lists by name with node, organization, state and peer', async () => {
    const res = await t.request('GET', `/api/v2/tunnel?node_id=${eastNode.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.total_count).toBe(2);
    expect(res.body.results.map((tunnel: { name: string }) => tunnel.name)).toEqual(['Backup', 'Uplink']);
    expect(res.body.results[0]).toMatchObject({
      key: 'b',
      state: 'TERMINATED',
      peer_node_id: westNode.id,
      node: { id: eastNode.id, name: 'east-1' },
      organization: { id: east, name: 'East' },
    });
    const services = await t.request('GET', '/api/v2/service?status=UNHEALTHY');
    expect(services.body.results).toHaveLength(1);
    expect(services.body.results[0]).toMatchObject({ key: 'm', name: 'Metrics', status: 'UNHEALTHY' });
    expect(services.body.results[0]).not.toHaveProperty('peer_node_id');
  });

  it('filters by state and keeps to the caller’s organizations', async () => {
    const connected = await t.request('GET', '/api/v2/tunnel?state=CONNECTED&size=100');
    expect(connected.body.results.map((tunnel: { name: string }) => tunnel.name).sort()).toEqual([
      'Uplink',
      'West link',
    ]);
    const mine = await t.request('GET', '/api/v2/tunnel?size=100', { key: eastOperator.key });
    expect(mine.body.results.map((tunnel: { name: string }) => tunnel.name)).toEqual(['Backup', 'Uplink']);
    expectError(await t.request('GET', '/api/v2/tunnel?state=DISCONNECTED'), 400, 'BAD_REQUEST');
    expectError(await t.request('GET', '/api/v2/service?state=HEALTHY'), 400, 'BAD_REQUEST');
  });
});

describe('one tunnel or service', () => {
  it('reads one, 404 for another organization’s, and forgets one until a report lists it again', async () => {
    const [tunnel] = (await t.request('GET', `/api/v2/tunnel?node_id=${westNode.id}`)).body.results;
    expect((await t.request('GET', `/api/v1/tunnel/${tunnel.id}`)).body).toEqual(tunnel);
    expectError(
      await t.request('GET', `/api/v1/tunnel/${tunnel.id}`, { key: eastOperator.key }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await t.request('DELETE', `/api/v1/tunnel/${tunnel.id}`, { key: eastOperator.key }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await t.request('DELETE', `/api/v1/tunnel/${tunnel.id}`, { key: reader.key }),
      403,
      'FORBIDDEN',
    );

    const forgotten = await t.request('DELETE', `/api/v1/tunnel/${tunnel.id}`);
    expect(forgotten.body).toMatchObject({ id: tunnel.id, status: 'SUCCESS' });
    expectError(await t.request('GET', `/api/v1/tunnel/${tunnel.id}`), 404, 'NOT_FOUND');
    await report(westNode.token, { tunnels: [{ key: 'w', name: 'West link', state: 'CONNECTED' }] });
    const again = (await t.request('GET', `/api/v2/tunnel?node_id=${westNode.id}`)).body.results;
    expect(again).toHaveLength(1);
    expect(again[0].id).not.toBe(tunnel.id);

    const [service] = (await t.request('GET', '/api/v2/service')).body.results;
    expect((await t.request('GET', `/api/v1/service/${service.id}`)).body).toEqual(service);
    expect((await t.request('DELETE', `/api/v1/service/${service.id}`)).status).toBe(200);
  });
});

describe('last-known states while a node is UNREACHABLE', () => {
  it('are flagged stale with the time of the last report, in every read and list, and fresh again on the next report', async () => {
    const quiet = await node('stale-1', east);
    await report(quiet.token, {
      tunnels: [{ key: 'u', name: 'Uplink', state: 'CONNECTED' }],
      services: [{ key: 's', name: 'Shell', status: 'HEALTHY' }],
    });
    const fresh = { stale: false, as_of: null };
    const tunnels = async (query = '') =>
      (await t.request('GET', `/api/v2/tunnel?node_id=${quiet.id}${query}`)).body;
    const [tunnel] = (await tunnels()).results;
    expect(tunnel).toMatchObject(fresh);
    expect((await t.request('GET', `/api/v1/node/${quiet.id}`)).body.resource_states).toEqual(fresh);

    const lastReport = (await t.request('GET', `/api/v1/node/${quiet.id}`)).body.last_seen_at as string;
    await silence(t, quiet.id);
    const stale = { stale: true, as_of: lastReport };
    expect((await tunnels()).results[0]).toMatchObject({ state: 'CONNECTED', ...stale });
    expect((await t.request('GET', `/api/v1/tunnel/${tunnel.id}`)).body).toMatchObject(stale);
    const [service] = (await t.request('GET', `/api/v2/service?node_id=${quiet.id}`)).body.results;
    expect(service).toMatchObject({ status: 'HEALTHY', ...stale });
    const read = (await t.request('GET', `/api/v1/node/${quiet.id}`)).body;
    expect(read).toMatchObject({ node_state: 'UNREACHABLE', resource_states: stale });
    const listed = (await t.request('GET', `/api/v2/node?search=stale-1`)).body.results[0];
    expect(listed.resource_states).toEqual(stale);
    expect((await tunnels('&stale=true')).total_count).toBe(1);
    expect((await tunnels('&stale=false')).total_count).toBe(0);

    await report(quiet.token, undefined);
    expect((await tunnels()).results[0]).toMatchObject(fresh);
    expect((await t.request('GET', `/api/v1/node/${quiet.id}`)).body.resource_states).toEqual(fresh);
    expect((await tunnels('&stale=true')).total_count).toBe(0);
  });
});
