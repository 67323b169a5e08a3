import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/harness.js';
import { DEFAULT_GROUPING } from './support/alerts.js';
import { PublishedClient } from './support/published-client.js';
import { receiverAccess, startCorrectReceiver, type ReceiverWithSecret } from './support/webhooks.js';

/**
 * The service driven over real HTTP exactly as the product's published client drives it: its headers on
 * every request, its list reading (support/published-client.ts), its alert bodies and its paths.
 * published-client-accounts.test.ts drives its defaults on every list, its user calls, its login and nodes.
 */

let t: TestApp;
let endpoint: ReceiverWithSecret;
let client: PublishedClient;
let orgId: string;

const call = (method: string, path: string, body?: unknown) => client.call(method, path, body);

beforeAll(async () => {
  t = await startTestApp(receiverAccess());
  endpoint = await startCorrectReceiver();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  client = new PublishedClient(baseUrl, '', { apikey: ADMIN_KEY });
  orgId = (await call('GET', '/api/v1/user/current')).body.organization.id;
  client.orgId = orgId;
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

describe('the published client', () => {
  it('reads the caller at /api/v1/user/current, with organization and username', async () => {
    const current = await call('GET', '/api/v1/user/current');
    expect(current.status).toBe(200);
    expect(current.contentType).toBe('application/json');
    expect(current.body).toMatchObject({
      name: 'Administrator',
      username: 'admin@edgewatch.local',
      email: 'admin@edgewatch.local',
      organization: { id: orgId, name: 'Root organization' },
      roles: [{ id: 'admin', name: 'Admin' }],
    });
    expect(current.body).toStrictEqual((await call('GET', '/api/v1/user/me')).body);
  });

  it('creates 30 e-mail alerts of all seven types with its own bodies and reads them back page by page', async () => {
    const kinds: [string, string][] = [
      ['NODE_STATE_CHANGE', 'UNREACHABLE,ALIVE'],
      ['TUNNEL_STATE_CHANGE', 'TERMINATED'],
      ['SERVICE_STATE_CHANGE', 'UNHEALTHY,TERMINATED'],
      ['NODE_IP_CHANGE', 'PUBLIC_IP'],
      ['CERT_EXPIRY', '80,100'],
      ['HEADLESS_EXPIRY', '100'],
      ['NODE_UPGRADE', 'FAILED'],
    ];
    const created: any[] = [];
    for (let i = 0; i < 30; i += 1) {
      const [type, alertMe] = kinds[i % kinds.length]!;
      const res = await call('POST', '/api/v1/mysubscriptions/', {
        name: `Client alert ${String(i).padStart(2, '0')}`,
        type,
        settings: { alert_me: alertMe, duration: 5, org_id: orgId },
        channel_type: null,
        channel_id: null,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.contentType).toBe('application/json');
      expect(res.body.channel_type).toBe('EMAIL');
      created.push(res.body);
    }
    const { results: listed } = await client.readList('/api/v2/mysubscriptions');
    expect(listed).toStrictEqual(created);
    // The four types that use a duration keep it; the three others accept it and show none.
    const byType = new Map(listed.map((alert) => [alert.type, alert.settings]));
    expect(byType.get('NODE_STATE_CHANGE')).toStrictEqual({
      org_id: orgId,
      alert_me: 'ALIVE,UNREACHABLE',
      duration: '5',
      include_child: 'true',
      ...DEFAULT_GROUPING.email,
    });
    expect(byType.get('SERVICE_STATE_CHANGE').alert_me).toBe('UNHEALTHY,TERMINATED');
    expect(byType.get('CERT_EXPIRY')).toStrictEqual({
      org_id: orgId,
      alert_me: '80,100',
      include_child: 'true',
      ...DEFAULT_GROUPING.email,
    });
    expect(byType.get('NODE_UPGRADE')).toStrictEqual({
      org_id: orgId,
      alert_me: 'FAILED',
      include_child: 'true',
      ...DEFAULT_GROUPING.email,
    });
  });

  it('pages every v2 list with the same envelope, its defaults and its bounds', async () => {
    for (const path of ['/api/v2/role', '/api/v2/org', '/api/v2/apikey', '/api/v2/mysubscriptions']) {
      const whole = await call('GET', `${path}?size=100`);
      expect(whole.contentType).toBe('application/json');
      expect(Object.keys(whole.body)).toEqual(['total_count', 'results']);
      const total: number = whole.body.total_count;
      const byDefault = await call('GET', path);
      expect(byDefault.body.results).toStrictEqual(whole.body.results.slice(0, 25));
      const pages = [];
      for (let page = 0; page * 7 < total + 7; page += 1) {
        const res = await call('GET', `${path}?page=${page}&size=7`);
        expect(res.body.total_count).toBe(total);
        pages.push(...res.body.results);
      }
      expect(pages).toStrictEqual(whole.body.results);
    }
  });

  it('creates a webhook with headers, reads it at /api/v1/webhook and deletes it at /api/v1/webhook/{id}', async () => {
    const created = await call('POST', '/api/v1/webhook', {
      name: 'Client hook',
      url: `${endpoint.receiver.url}/client`,
      headers: { 'X-Team': 'edge' },
      secret: endpoint.secret.value,
    });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    const list = await call('GET', '/api/v1/webhook');
    expect(list.contentType).toBe('application/json');
    expect(list.body).toStrictEqual((await call('GET', '/api/v2/webhook')).body);
    expect(list.body.find((hook: any) => hook.id === id).headers).toStrictEqual({ 'X-Team': 'edge' });

    expect((await call('POST', `/api/v1/webhook/${id}/verify`)).body.status).toBe('SUCCESS');
    const edited = await call('PUT', `/api/v1/webhook/${id}`, { headers: { 'X-Team': 'core' } });
    expect(edited.status).toBe(200);
    expect((await call('GET', `/api/v1/webhook/${id}`)).body.headers).toStrictEqual({ 'X-Team': 'core' });
    expect((await call('POST', `/api/v1/webhook/${id}/verify`)).body.status).toBe('SUCCESS');

    const alert = await call('POST', '/api/v1/mysubscriptions/', {
      name: 'Client webhook alert',
      type: 'TUNNEL_STATE_CHANGE',
      settings: { alert_me: 'CONNECTED,TERMINATED', duration: 5, org_id: orgId },
      channel_type: 'WEBHOOK',
      channel_id: id,
    });
    expect(alert.status, JSON.stringify(alert.body)).toBe(201);
    expect(alert.body.channel).toStrictEqual({ id, name: 'Client hook' });

    const refused = await call('DELETE', `/api/v1/webhook/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.contentType).toBe('application/json');
    const forced = await call('DELETE', `/api/v1/webhook/${id}?force=true`);
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ id, status: 'SUCCESS', removed_alert_ids: [alert.body.id] });
    expect((await call('GET', `/api/v1/webhook/${id}`)).status).toBe(404);

    const unused = await call('POST', '/api/v1/webhook', {
      name: 'Unused',
      url: `${endpoint.receiver.url}/u`,
    });
    const removed = await call('DELETE', `/api/v1/webhook/${unused.body.id}`);
    expect(removed.body).toStrictEqual({
      id: unused.body.id,
      message: expect.any(String),
      status: 'SUCCESS',
    });
  });

  it('places new users and organizations with create_under', async () => {
    const org = await call('POST', '/api/v1/org', { name: 'Client branch', create_under: orgId });
    expect(org.status).toBe(201);
    expect(org.body.parent_id).toBe(orgId);
    const user = await call('POST', '/api/v1/user', {
      name: 'Client user',
      email: 'client.user@example.com',
      password: 'initial-password',
      roles: ['read_only'],
      create_under: org.body.id,
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const stored = await t.ctx.db
      .selectFrom('users')
      .select('org_id')
      .where('id', '=', user.body.id)
      .executeTakeFirst();
    expect(stored?.org_id).toBe(org.body.id);
  });
});
