import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/error-shape.js';
import { startTestApp, type TestApp } from './support/harness.js';

// Alerts scoped to a node, a tunnel or a service (docs/rules/alerts-and-fleet.md#scopes), and removing what
// they watch.
let t: TestApp;
let root: string;
let east: string;
let eastChild: string;
let west: string;

interface Registered {
  id: string;
  token: string;
  tunnel: string;
  service: string;
}

async function registered(name: string, orgId: string): Promise<Registered> {
  const created = await t.request('POST', '/api/v1/node', { body: { name, create_under: orgId } });
  expect(created.status, created.text).toBe(201);
  const token = created.body.token as string;
  const res = await t.request('POST', '/api/v1/agent/report', {
    key: null,
    headers: { 'x-node-token': token },
    body: {
      tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED' }],
      services: [{ key: 'db', name: 'Database', status: 'HEALTHY' }],
    },
  });
  expect(res.status, res.text).toBe(200);
  const id = created.body.id as string;
  const tunnel = (await t.request('GET', `/api/v2/tunnel?node_id=${id}`)).body.results[0].id as string;
  const service = (await t.request('GET', `/api/v2/service?node_id=${id}`)).body.results[0].id as string;
  return { id, token, tunnel, service };
}

async function org(name: string, parent?: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/org', {
    body: { name, ...(parent === undefined ? {} : { parent_id: parent }) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

const alert = (type: string, settings: Record<string, unknown>, key?: string) =>
  t.request('POST', '/api/v1/mysubscriptions', {
    body: { name: `${type} scoped`, type, settings },
    ...(key === undefined ? {} : { key }),
  });

beforeAll(async () => {
  t = await startTestApp();
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  east = await org('East');
  eastChild = await org('East child', east);
  west = await org('West');
});
afterAll(async () => {
  await t.close();
});

describe('alert scopes in settings', () => {
  it('scopes any type to a node, a tunnel alert to a tunnel and a service alert to a service', async () => {
    const node = await registered('scoped-1', east);
    const onNode = await alert('NODE_UPGRADE', { org_id: east, node_id: node.id });
    expect(onNode.status, onNode.text).toBe(201);
    expect(onNode.body.settings).toEqual({
      org_id: east,
      alert_me: 'ENABLED,DISABLED,SUCCESSFUL,FAILED',
      include_child: 'true',
      node_id: node.id,
      group_by: 'organization',
      group_wait: '10',
      group_interval: '300',
      repeat_interval: '14400',
    });
    const onTunnel = await alert('TUNNEL_STATE_CHANGE', {
      org_id: east,
      node_id: node.id,
      tunnel_id: node.tunnel,
    });
    expect(onTunnel.status, onTunnel.text).toBe(201);
    expect(onTunnel.body.settings).toMatchObject({ node_id: node.id, tunnel_id: node.tunnel });
    const onService = await alert('SERVICE_STATE_CHANGE', { org_id: root, pod_id: node.service });
    expect(onService.status, onService.text).toBe(201);
    expect(onService.body.settings).toMatchObject({ pod_id: node.service });
    expect(onService.body.settings.node_id).toBeUndefined();

    // Read back the same, and a scope given as null on edit is removed.
    expect((await t.request('GET', `/api/v1/mysubscriptions/${onTunnel.body.id}`)).body).toEqual(
      onTunnel.body,
    );
    const widened = await t.request('PUT', `/api/v1/mysubscriptions/${onTunnel.body.id}`, {
      body: { settings: { tunnel_id: null } },
    });
    expect(widened.status, widened.text).toBe(200);
    expect(widened.body.settings.tunnel_id).toBeUndefined();
    expect(widened.body.settings.node_id).toBe(node.id);
  });

  it('refuses a scope that does not fit the type, networks, and anything outside org_id', async () => {
    const node = await registered('scoped-2', eastChild);
    const other = await registered('scoped-3', west);
    const cases: [string, Record<string, unknown>, string][] = [
      ['NODE_STATE_CHANGE', { org_id: east, tunnel_id: node.tunnel }, 'settings.tunnel_id'],
      ['TUNNEL_STATE_CHANGE', { org_id: east, pod_id: node.service }, 'settings.pod_id'],
      ['NODE_STATE_CHANGE', { org_id: east, network_id: 'net-1' }, 'settings.network_id'],
      ['NODE_STATE_CHANGE', { org_id: east, node_id: other.id }, 'settings.node_id'],
      ['NODE_STATE_CHANGE', { org_id: east, include_child: false, node_id: node.id }, 'settings.node_id'],
      [
        'TUNNEL_STATE_CHANGE',
        { org_id: root, node_id: other.id, tunnel_id: node.tunnel },
        'settings.tunnel_id',
      ],
    ];
    for (const [type, settings, field] of cases) {
      const res = await alert(type, settings);
      expectError(res, 400, 'BAD_REQUEST');
      expect(
        res.body.details.map((detail: { field: string }) => detail.field),
        JSON.stringify(settings),
      ).toContain(field);
    }
    expect((await t.request('GET', '/api/v2/mysubscriptions?size=100')).body.results).not.toContainEqual(
      expect.objectContaining({ settings: expect.objectContaining({ node_id: other.id }) }),
    );
  });

  it('answers 404 for a scope that does not exist or that the caller cannot see', async () => {
    const westNode = await registered('scoped-4', west);
    const eastUser = await t.userWithRoles(['operator'], east);
    expectError(
      await alert('NODE_STATE_CHANGE', { org_id: root, node_id: 'no-such-node' }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await alert('TUNNEL_STATE_CHANGE', { org_id: root, tunnel_id: 'no-such-tunnel' }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await alert('SERVICE_STATE_CHANGE', { org_id: root, pod_id: 'no-such-service' }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await alert('NODE_STATE_CHANGE', { org_id: east, node_id: westNode.id }, eastUser.key),
      404,
      'NOT_FOUND',
    );
  });
});

describe('removing what alerts watch', () => {
  it('refuses to delete a node watched by alerts (its own, its tunnels’) unless force=true', async () => {
    const node = await registered('doomed', east);
    const onNode = await alert('NODE_STATE_CHANGE', { org_id: east, node_id: node.id });
    const onTunnel = await alert('TUNNEL_STATE_CHANGE', { org_id: east, tunnel_id: node.tunnel });
    const unscoped = await alert('NODE_STATE_CHANGE', { org_id: east });

    const refused = await t.request('DELETE', `/api/v1/node/${node.id}`);
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.message).toContain('2 alert(s)');
    expect((await t.request('GET', `/api/v1/node/${node.id}`)).status).toBe(200);

    const forced = await t.request('DELETE', `/api/v1/node/${node.id}?force=true`);
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body).toEqual({
      id: node.id,
      message: 'Node deleted with 2 alert(s).',
      status: 'SUCCESS',
      removed_alert_ids: [onNode.body.id, onTunnel.body.id].sort(),
    });
    expect((await t.request('GET', `/api/v1/mysubscriptions/${onNode.body.id}`)).status).toBe(404);
    expect((await t.request('GET', `/api/v1/mysubscriptions/${onTunnel.body.id}`)).status).toBe(404);
    expect((await t.request('GET', `/api/v1/mysubscriptions/${unscoped.body.id}`)).status).toBe(200);
    const list = await t.request('GET', '/api/v2/mysubscriptions?size=100');
    expect(list.body.results.map((a: { id: string }) => a.id)).not.toContain(onNode.body.id);
  });

  it('refuses to forget a tunnel or service watched by alerts unless force=true', async () => {
    const node = await registered('forgetful', east);
    const onService = await alert('SERVICE_STATE_CHANGE', { org_id: east, pod_id: node.service });
    expectError(await t.request('DELETE', `/api/v1/service/${node.service}`), 409, 'CONFLICT');
    expect((await t.request('GET', `/api/v1/service/${node.service}`)).status).toBe(200);
    const forced = await t.request('DELETE', `/api/v1/service/${node.service}?force=true`);
    expect(forced.body).toMatchObject({ status: 'SUCCESS', removed_alert_ids: [onService.body.id] });
    const plain = await t.request('DELETE', `/api/v1/tunnel/${node.tunnel}`);
    expect(plain.body).toEqual({
      id: node.tunnel,
      message: 'Tunnel forgotten until a report lists it again.',
      status: 'SUCCESS',
    });
  });
});
