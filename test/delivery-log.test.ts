import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/error-shape.js';
import { aliveNode, until } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
import {
  correctEndpoint,
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// A webhook's delivery log: every delivery and request, sending one again, and a replay since a time.
let t: TestApp;
let endpoint: ReceiverWithSecret;
let hook: string;
let reader: { id: string; key: string };
let readerHook: string;
let operator: { key: string };
let root: string;
const nodes: string[] = [];

const tunnelReport = { tunnels: [{ key: 'uplink', name: 'Uplink', state: 'CONNECTED' }] };

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  endpoint.receiver.handle(correctEndpoint(() => endpoint.secret.value));
  t = await startTestApp(receiverAccess());
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  hook = (await enabledWebhook(t, endpoint, { name: 'Log' })).id;
  const alert = await t.request('POST', '/api/v1/mysubscriptions', {
    body: {
      name: 'Tunnels',
      type: 'TUNNEL_STATE_CHANGE',
      settings: { org_id: root },
      channel_type: 'webhook',
      channel_id: hook,
    },
  });
  expect(alert.status, alert.text).toBe(201);
  for (const name of ['log-a', 'log-b', 'log-c']) {
    nodes.push((await aliveNode(t, name, { report: tunnelReport })).id);
    await t.jobsSettled();
  }
  operator = await t.userWithRoles(['operator']);
  reader = await t.userWithRoles(['read_only']);
  // A Read Only user cannot register a webhook; this one was handed one (say, when their role changed).
  readerHook = (await enabledWebhook(t, endpoint, { name: 'Handed over' })).id;
  await t.ctx.db.updateTable('webhooks').set({ user_id: reader.id }).where('id', '=', readerHook).execute();
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

const log = async (query = '', key?: string) => {
  const res = await t.request(
    'GET',
    `/api/v1/webhook/${hook}/deliveries${query}`,
    key === undefined ? {} : { key },
  );
  expect(res.status, res.text).toBe(200);
  return res.body as { total_count: number; results: any[] };
};

const postsWith = (deliveryId: string) =>
  endpoint.receiver.requests.filter(
    (request) => request.method === 'POST' && request.headers['x-service-delivery'] === deliveryId,
  );

describe('GET /api/v1/webhook/{id}/deliveries', () => {
  it('lists every delivery of the webhook, newest first, with its outcome and what it was about', async () => {
    const all = await log();
    expect(all.total_count).toBe(3);
    const created = all.results.map((entry) => entry.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    const tunnel = await t.request('GET', `/api/v2/tunnel?node_id=${nodes[2]}`);
    expect(tunnel.status, tunnel.text).toBe(200);
    expect(all.results[0]).toStrictEqual({
      id: expect.any(String),
      notification_id: expect.any(String),
      alert: { id: expect.any(String), name: 'Tunnels' },
      type: 'TUNNEL_STATE_CHANGE',
      organization: { id: root, name: 'Root organization' },
      node: { id: nodes[2], name: 'log-c' },
      resource: { kind: 'tunnel', id: tunnel.body.results[0].id, name: 'Uplink' },
      status: 'delivered',
      attempts: 1,
      last_attempt_at: expect.any(String),
      next_attempt_at: null,
      last_status_code: 200,
      last_error: null,
      created_at: expect.any(String),
      delivered_at: expect.any(String),
    });
    expect(postsWith(all.results[0].id)).toHaveLength(1);
  });

  it('filters by status and time, and pages', async () => {
    expect((await log('?status=delivered')).total_count).toBe(3);
    expect((await log('?status=pending')).total_count).toBe(0);
    const [newest] = (await log()).results;
    expect((await log(`?start_date=${encodeURIComponent(newest.created_at)}`)).total_count).toBe(1);
    expect((await log('?end_date=2000-01-01T00:00:00Z')).total_count).toBe(0);
    const page = await log('?size=2&page=1');
    expect(page).toMatchObject({ total_count: 3, results: [expect.any(Object)] });
  });

  it('refuses bad filters, and answers 404 for a webhook that is not the caller’s', async () => {
    expectError(await t.request('GET', `/api/v1/webhook/${hook}/deliveries?status=lost`), 400, 'BAD_REQUEST');
    expectError(
      await t.request('GET', `/api/v1/webhook/${hook}/deliveries?start_date=soon`),
      400,
      'BAD_REQUEST',
    );
    expectError(await t.request('GET', `/api/v1/webhook/${hook}/deliveries?colour=red`), 400, 'BAD_REQUEST');
    expectError(
      await t.request('GET', `/api/v1/webhook/${hook}/deliveries`, { key: operator.key }),
      404,
      'NOT_FOUND',
    );
    expectError(await t.request('GET', '/api/v1/webhook/no-such-hook/deliveries'), 404, 'NOT_FOUND');
    expectError(
      await t.request('GET', `/api/v1/webhook/${hook}/deliveries`, { key: null }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('GET /api/v1/webhook/{id}/deliveries/{delivery_id}', () => {
  it('adds every request made for the delivery', async () => {
    const [entry] = (await log()).results;
    const res = await t.request('GET', `/api/v1/webhook/${hook}/deliveries/${entry.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      ...entry,
      attempt_log: [{ status_code: 200, failure: null, error: null }],
    });
    expect(res.body.attempt_log[0].response).toBe('{"received":true}');
  });

  it('answers 404 for an unknown delivery, one of another webhook, or a webhook not the caller’s', async () => {
    const [entry] = (await log()).results;
    expectError(await t.request('GET', `/api/v1/webhook/${hook}/deliveries/nope`), 404, 'NOT_FOUND');
    expectError(
      await t.request('GET', `/api/v1/webhook/${readerHook}/deliveries/${entry.id}`, { key: reader.key }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await t.request('GET', `/api/v1/webhook/${hook}/deliveries/${entry.id}`, { key: operator.key }),
      404,
      'NOT_FOUND',
    );
  });
});

describe('POST /api/v1/webhook/{id}/deliveries/{delivery_id}/retry', () => {
  it('sends an expired delivery again, with the same delivery id, and only a failed or expired one', async () => {
    const [entry] = (await log()).results;
    expectError(
      await t.request('POST', `/api/v1/webhook/${hook}/deliveries/${entry.id}/retry`),
      409,
      'CONFLICT',
    );
    // Held for longer than a webhook may hold (the hourly retention's verdict), as the database records it.
    await t.ctx.db.updateTable('deliveries').set({ status: 'expired' }).where('id', '=', entry.id).execute();
    await t.ctx.db
      .updateTable('notifications')
      .set({ status: 'expired' })
      .where('id', '=', entry.notification_id)
      .execute();

    const res = await t.request('POST', `/api/v1/webhook/${hook}/deliveries/${entry.id}/retry`);
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ id: entry.id, status: 'pending' });
    await until('the delivery sent again', () => postsWith(entry.id).length === 2);
    await t.jobsSettled();
    const after = await t.request('GET', `/api/v1/webhook/${hook}/deliveries/${entry.id}`);
    expect(after.body).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(after.body.attempt_log).toHaveLength(2);
    const notification = await t.request('GET', `/api/v1/notification/${entry.notification_id}`);
    expect(notification.body.status).toBe('delivered');
  });

  it('answers 422 with the reference’s body while the webhook is disabled, and 404 for others', async () => {
    const [entry] = (await log()).results;
    // An Operator reads the notification (scope=org shows it), but sending it again stays with the owner.
    const read = await t.request('GET', `/api/v1/notification/${entry.notification_id}`, {
      key: operator.key,
    });
    expect(read.status, read.text).toBe(200);
    expectError(
      await t.request('POST', `/api/v1/webhook/${hook}/deliveries/${entry.id}/retry`, { key: operator.key }),
      404,
      'NOT_FOUND',
    );
    expectError(await t.request('POST', `/api/v1/webhook/${hook}/deliveries/nope/retry`), 404, 'NOT_FOUND');
    const edited = await t.request('PUT', `/api/v1/webhook/${hook}`, { body: { name: 'Log, edited' } });
    expect(edited.status, edited.text).toBe(200);
    const refused = await t.request('POST', `/api/v1/webhook/${hook}/deliveries/${entry.id}/retry`);
    expectError(refused, 422, 'UNPROCESSABLE_ENTITY');
    expect(refused.body.message).toMatch(/disabled/);
    expectError(
      await t.request('POST', `/api/v1/webhook/${hook}/replay`, { body: { since: '0' } }),
      422,
      'UNPROCESSABLE_ENTITY',
    );
    const verified = await t.request('POST', `/api/v1/webhook/${hook}/verify`);
    expect(verified.body.status).toBe('SUCCESS');
  });
});

describe('POST /api/v1/webhook/{id}/replay', () => {
  it('sends again everything delivered since a time, oldest first, each with its delivery id', async () => {
    const all = (await log()).results;
    const oldest = all[all.length - 1];
    const since = all[1].created_at;
    const res = await t.request('POST', `/api/v1/webhook/${hook}/replay`, { body: { since } });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ queued: 2 });
    await until('the replay delivered', async () => (await log('?status=delivered')).total_count === 3);
    for (const entry of all.slice(0, 2)) expect(postsWith(entry.id).length).toBeGreaterThanOrEqual(2);
    expect(postsWith(oldest.id)).toHaveLength(1);

    const everything = await t.request('POST', `/api/v1/webhook/${hook}/replay`, { body: { since: '0' } });
    expect(everything.body).toEqual({ queued: 3 });
    await until(
      'the second replay delivered',
      async () => (await log('?status=delivered')).total_count === 3,
    );
    expect(postsWith(oldest.id)).toHaveLength(2);
  });

  it('refuses a bad or missing time, and another user’s webhook', async () => {
    const bad = await t.request('POST', `/api/v1/webhook/${hook}/replay`, { body: { since: 'yesterday' } });
    expectError(bad, 400, 'BAD_REQUEST');
    expect(bad.body.message).toMatch(/since/);
    expectError(await t.request('POST', `/api/v1/webhook/${hook}/replay`, { body: {} }), 400, 'BAD_REQUEST');
    expectError(
      await t.request('POST', `/api/v1/webhook/${hook}/replay`, { body: { since: '0' }, key: operator.key }),
      404,
      'NOT_FOUND',
    );
    expect(
      (await t.request('POST', `/api/v1/webhook/${hook}/replay`, { body: { since: '9999999999999' } })).body,
    ).toEqual({
      queued: 0,
    });
  });
});

describe('Read Only', () => {
  it('reads the log of its own webhook but neither retries nor replays', async () => {
    const own = await t.request('GET', `/api/v1/webhook/${readerHook}/deliveries`, { key: reader.key });
    expect(own.status, own.text).toBe(200);
    expect(own.body).toEqual({ total_count: 0, results: [] });
    expectError(
      await t.request('POST', `/api/v1/webhook/${readerHook}/replay`, {
        key: reader.key,
        body: { since: '0' },
      }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await t.request('POST', `/api/v1/webhook/${readerHook}/deliveries/any/retry`, { key: reader.key }),
      403,
      'FORBIDDEN',
    );
  });
});
