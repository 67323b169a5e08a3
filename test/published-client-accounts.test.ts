import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, latestVerificationToken, startTestApp, type TestApp } from './support/harness.js';
import { aliveNode } from './support/fleet.js';
import { PublishedClient } from './support/published-client.js';

/**
 * The published client run as its users run it: every list with the defaults it adds (org_id and own=true),
 * paging past 25 as it does, its user calls, its login and logout with the token header, and its node calls
 * (support/published-client.ts holds its requests).
 */

let t: TestApp;
let baseUrl: string;
let admin: PublishedClient;
let orgId: string;

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  admin = new PublishedClient(baseUrl, '', { apikey: ADMIN_KEY });
  orgId = (await admin.call('GET', '/api/v1/user/current')).body.organization.id;
  admin.orgId = orgId;
});
afterAll(async () => {
  await t.close();
});

/** The client's node.add body: profile_id "" and max_headless_time 0 unless given, stat_mode FAST. */
function clientNode(name: string, org = orgId, serial?: string) {
  return {
    name,
    profile_id: '',
    ...(serial === undefined ? {} : { hardware_serial_number: serial }),
    create_under: org,
    max_headless_time: 0,
    metadata: { labels: {} },
    stat_mode: 'FAST',
  };
}

describe("every list with the client's defaults", () => {
  it('answers the lists it reads (alerts, notifications, nodes, organizations, roles, users, keys, events)', async () => {
    const node = await admin.call('POST', '/api/v1/node', clientNode('gw-defaults'));
    expect(node.status, JSON.stringify(node.body)).toBe(201);
    await admin.call('POST', '/api/v1/mysubscriptions', {
      name: 'Defaults',
      type: 'NODE_STATE_CHANGE',
      settings: { alert_me: 'ALIVE,UNREACHABLE', duration: 5, org_id: orgId },
      channel_type: null,
      channel_id: null,
    });
    for (const path of [
      '/api/v2/mysubscriptions',
      '/api/v2/notification',
      '/api/v2/node',
      '/api/v2/org',
      '/api/v2/role',
      '/api/v2/user',
      '/api/v2/apikey',
      '/api/v2/channel',
      '/api/v2/silence',
      '/api/v2/event',
      '/api/v2/tunnel',
      '/api/v2/service',
      `/api/v2/notification/node/${node.body.id}/event`,
    ]) {
      const withDefaults = await admin.call('GET', `${path}${admin.filterString()}`);
      expect(withDefaults.status, `${path}: ${JSON.stringify(withDefaults.body)}`).toBe(200);
      // For the caller's own organization, the client's defaults change nothing.
      const bare = await admin.call('GET', path);
      expect(withDefaults.body, path).toStrictEqual(bare.body);
    }
    expect((await admin.readList('/api/v2/node')).results.map((n) => n.name)).toContain('gw-defaults');
    expect((await admin.readList('/api/v2/role')).results.map((role) => role.id)).toEqual([
      'admin',
      'operator',
      'read_only',
    ]);
  });

  it('takes the defaults on the webhook list too, which stays a bare array', async () => {
    const res = await admin.call('GET', `/api/v2/webhook${admin.filterString()}`);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
  });

  it('pages past 25 as the client does, down to the empty page past the end of a hundred', async () => {
    const before = (await admin.call('GET', '/api/v2/org')).body.total_count as number;
    for (let i = before; i < 100; i += 1) {
      const org = await admin.call('POST', '/api/v1/org', { name: `Branch ${i}`, create_under: orgId });
      expect(org.status).toBe(201);
    }
    const { results, pages } = await admin.readList('/api/v2/org');
    expect(pages).toBe(2);
    expect(results).toHaveLength(100);
    expect(new Set(results.map((org) => org.id)).size).toBe(100);
    for (const org of results) {
      expect(org).toEqual(
        expect.objectContaining({ node_count: expect.any(Number), user_count: expect.any(Number) }),
      );
    }
    expect(results[0]).toMatchObject({ id: orgId, user_count: 1, node_count: 1 });
  });

  it('answers 404 for an organization the caller cannot see, and 400 for a parameter no list knows', async () => {
    const branch = await admin.call('POST', '/api/v1/org', { name: 'Out of sight', create_under: orgId });
    const reader = await t.userWithRoles(['read_only'], branch.body.id);
    const client = new PublishedClient(baseUrl, branch.body.id, { apikey: reader.key });
    expect((await client.readList('/api/v2/org')).results.map((org) => org.id)).toEqual([branch.body.id]);
    for (const path of ['/api/v2/node', '/api/v2/mysubscriptions', '/api/v2/role', '/api/v2/user']) {
      const hidden = await client.call('GET', `${path}?org_id=${orgId}&own=true`);
      expect(hidden.status, path).toBe(404);
    }
    const unknown = await admin.call('GET', `/api/v2/node${admin.filterString()}&colour=blue`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('colour');
  });
});

describe('its user calls', () => {
  it('lists users (user.getv2), edits one (user.edit) and deletes one (user.delete)', async () => {
    const created = await admin.call('POST', '/api/v1/user', {
      name: 'Client managed',
      email: 'client.managed@example.com',
      password: 'initial-password',
      roles: ['operator'],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const { results } = await admin.readList('/api/v2/user');
    expect(results.find((user) => user.id === id)).toMatchObject({
      name: 'Client managed',
      email_verified: false,
    });

    // user.edit(user_id, name=None, role_id='read_only'): name "", the role in a list, empty password and e-mail.
    const roleOnly = await admin.call('PUT', `/api/v1/user/${id}`, {
      name: '',
      roles: ['read_only'],
      password: '',
      email: '',
    });
    expect(roleOnly.status, JSON.stringify(roleOnly.body)).toBe(200);
    expect(roleOnly.body).toMatchObject({
      name: 'Client managed',
      roles: [{ id: 'read_only', name: 'Read Only' }],
    });
    const nameOnly = await admin.call('PUT', `/api/v1/user/${id}`, {
      name: 'Renamed',
      roles: [],
      password: '',
      email: '',
    });
    expect(nameOnly.body).toMatchObject({ name: 'Renamed', roles: [{ id: 'read_only' }] });

    const deleted = await admin.call('DELETE', `/api/v1/user/${id}`);
    expect(deleted.status).toBe(200);
    expect((await admin.call('GET', `/api/v1/user/${id}`)).status).toBe(404);
  });

  it('reads its notifications (user.notifications) with the defaults, and by organization', async () => {
    const mine = await admin.readList('/api/v2/notification');
    const byOrg = await admin.readList('/api/v2/notification', { org_id: orgId });
    expect(byOrg.results).toStrictEqual(mine.results);
  });
});

describe('its login', () => {
  it('logs in at /api/v1/authenticate, works with the token alone, and logs out', async () => {
    const user = await t.userWithRoles(['operator']);
    const anonymous = new PublishedClient(baseUrl, orgId, {});
    const login = await anonymous.call('POST', '/api/v1/authenticate', {
      username: user.email,
      password: user.password,
    });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(Object.keys(login.body).sort()).toEqual(['token', 'user']);
    expect(login.body.user).toMatchObject({ id: user.id, roles: [{ id: 'operator', name: 'Operator' }] });

    const withToken = new PublishedClient(baseUrl, orgId, { token: login.body.token });
    expect(withToken.headers()['X-API-KEY']).toBe('');
    const me = await withToken.call('GET', '/api/v1/user/current');
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(user.id);
    expect((await withToken.readList('/api/v2/mysubscriptions')).results).toEqual([]);

    const both = new PublishedClient(baseUrl, orgId, { token: login.body.token, apikey: login.body.token });
    expect((await both.call('GET', '/api/v1/user/current')).status).toBe(200);
    const differing = new PublishedClient(baseUrl, orgId, { token: login.body.token, apikey: user.key });
    const refused = await differing.call('GET', '/api/v1/user/current');
    expect(refused.status).toBe(401);
    expect(refused.body.errorCode).toBe('UNAUTHORIZED');

    const logout = await withToken.call('POST', '/api/v1/logout', { username: '', password: '' });
    expect(logout.status, JSON.stringify(logout.body)).toBe(200);
    expect((await withToken.call('GET', '/api/v1/user/current')).status).toBe(401);
    // Only the key it logged out with: the user's other key still works.
    const other = new PublishedClient(baseUrl, orgId, { apikey: user.key });
    expect((await other.call('GET', '/api/v1/user/current')).status).toBe(200);
  });

  it('follows the login rules: wrong credentials, unverified e-mail, the first-login password change, otp', async () => {
    const anonymous = new PublishedClient(baseUrl, orgId, {});
    const email = 'first.login@example.com';
    const created = await admin.call('POST', '/api/v1/user', {
      name: 'First login',
      email,
      password: 'initial-password',
      roles: ['read_only'],
    });
    expect(created.status).toBe(201);
    const wrong = await anonymous.call('POST', '/api/v1/authenticate', {
      username: email,
      password: 'wrong-password',
    });
    expect(wrong.status).toBe(401);
    const body = { username: email, password: 'initial-password', otp: '123456' };
    const unverified = await anonymous.call('POST', '/api/v1/authenticate', body);
    expect(unverified.status).toBe(403);
    expect(unverified.body.message).toContain('not verified');
    const token = await latestVerificationToken(t.ctx, email);
    expect((await anonymous.call('GET', `/api/v1/user/verify-email?token=${token}`)).status).toBe(200);
    const firstLogin = await anonymous.call('POST', '/api/v1/authenticate', body);
    expect(firstLogin.status).toBe(403);
    expect(firstLogin.body.message).toContain('password change is required');
    const changed = await anonymous.call('POST', '/api/v1/authenticate', {
      ...body,
      new_password: 'a-new-password',
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const later = await anonymous.call('POST', '/api/v1/authenticate', {
      username: email,
      password: 'a-new-password',
    });
    expect(later.status).toBe(200);
  });

  it('counts towards the login limits', async () => {
    const anonymous = new PublishedClient(baseUrl, orgId, {});
    const user = await t.userWithRoles(['read_only']);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) {
      const res = await anonymous.call('POST', '/api/v1/authenticate', {
        username: user.email,
        password: 'not-it-at-all',
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 10).every((status) => status === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });

  it('answers 401 without any key, and takes an empty X_AUTH_TOKEN as none', async () => {
    const anonymous = new PublishedClient(baseUrl, orgId, {});
    const res = await anonymous.call('GET', '/api/v1/user/current');
    expect(res.status).toBe(401);
    expect(res.body.message).toContain('X-API-KEY');
  });
});

describe('its node calls', () => {
  it('adds a node with its whole body (node.add) and answers profile_id and stat_mode back', async () => {
    const res = await admin.call('POST', '/api/v1/node', {
      ...clientNode('gw-client', orgId, 'SN-CLIENT-1'),
      profile_id: 'edge-v2',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.metadata).toStrictEqual({ labels: {}, profile_id: 'edge-v2', stat_mode: 'FAST' });
    expect(res.body.max_headless_time).toBe(0);
    const read = await admin.call('GET', `/api/v1/node/${res.body.id}`);
    expect(read.body.metadata).toStrictEqual(res.body.metadata);
    const plain = await admin.call('POST', '/api/v1/node', { name: 'gw-plain' });
    expect(plain.body.metadata).toStrictEqual({ labels: {} });
    const empty = await admin.call('POST', '/api/v1/node', clientNode('gw-empty-profile'));
    expect(empty.body.metadata).toStrictEqual({ labels: {}, stat_mode: 'FAST' });
  });

  it("reads a node's notifications (node.notifications) in the list envelope; an unseen node is 404", async () => {
    const alert = await admin.call('POST', '/api/v1/mysubscriptions', {
      name: 'Nodes up',
      type: 'NODE_STATE_CHANGE',
      settings: { alert_me: 'ALIVE', org_id: orgId },
      channel_type: null,
      channel_id: null,
    });
    expect(alert.status).toBe(201);
    const watched = await aliveNode(t, 'gw-notified');
    const other = await aliveNode(t, 'gw-other');
    const path = `/api/v2/notification/node/${watched.id}/event`;
    const { results } = await admin.readList(path);
    expect(results.map((n) => [n.node.id, n.type, n.condition])).toEqual([
      [watched.id, 'NODE_STATE_CHANGE', 'ALIVE'],
    ]);
    expect(results[0].alert.id).toBe(alert.body.id);
    const typed = await admin.readList(path, { type: 'NODE_STATE_CHANGE' });
    expect(typed.results).toStrictEqual(results);
    const none = await admin.readList(path, { type: 'NODE_UPGRADE' });
    expect(none.results).toEqual([]);
    expect((await admin.readList(`/api/v2/notification/node/${other.id}/event`)).results).toHaveLength(1);
    expect((await admin.call('GET', '/api/v2/notification/node/no-such-node/event')).status).toBe(404);
  });
});
