import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookRetryDelay } from '../src/features/deliveries/schedule.js';
import { aliveNode, silence, until } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
import type { ReceiverHandler } from './support/https-receiver.js';
import {
  correctEndpoint,
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// A failing receiver: retries gated per webhook, every request recorded, the 10th consecutive failure
// disables the webhook and tells its owner, and verifying it again releases what was held, in order.
let t: TestApp;
let endpoint: ReceiverWithSecret;
let orgId: string;
/** POSTs still to be answered 503. */
let failuresLeft = 0;

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  const correct = correctEndpoint(() => endpoint.secret.value);
  const flaky: ReceiverHandler = (request, response) => {
    if (request.method === 'POST' && failuresLeft > 0) {
      failuresLeft -= 1;
      response.writeHead(503, { 'content-type': 'text/plain' });
      response.end('down for maintenance');
      return;
    }
    return correct(request, response);
  };
  endpoint.receiver.handle(flaky);
  const access = receiverAccess();
  t = await startTestApp({
    ...access,
    env: { ...access.env, DELIVERY_RETRY_SCHEDULE: '0', JOB_POLL_INTERVAL_MS: '20' },
  });
  orgId = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

async function goesDown(name: string): Promise<string> {
  const node = await aliveNode(t, name);
  await silence(t, node.id);
  return node.id;
}

const webhookRow = (id: string) =>
  t.ctx.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

const notificationsOf = async (nodeId: string) =>
  (await t.request('GET', `/api/v2/notification?node_id=${nodeId}`)).body.results as any[];

const posts = (nodeId: string) =>
  endpoint.receiver.requests.filter((r) => r.method === 'POST' && r.body.includes(nodeId));

describe('the retry schedule', () => {
  it('waits the n-th step (the last repeating), ±20 %, or a Retry-After up to an hour', () => {
    const schedule = [5_000, 30_000, 120_000];
    expect(webhookRetryDelay(1, schedule, undefined, 0.5)).toBe(5_000);
    expect(webhookRetryDelay(2, schedule, undefined, 0)).toBe(24_000);
    expect(webhookRetryDelay(3, schedule, undefined, 0.999_999)).toBe(144_000);
    expect(webhookRetryDelay(9, schedule, undefined, 0.5)).toBe(120_000);
    expect(webhookRetryDelay(1, schedule, 42_000, 0.5)).toBe(42_000);
    expect(webhookRetryDelay(1, schedule, 7_200_000, 0.5)).toBe(5_000);
  });
});

describe('a failing receiver', () => {
  it('disables the webhook at the 10th consecutive failure, holds, and releases in order on verify', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Flaky' });
    const alert = await t.request('POST', '/api/v1/mysubscriptions', {
      body: {
        name: 'Down',
        type: 'NODE_STATE_CHANGE',
        settings: { org_id: orgId, alert_me: 'UNREACHABLE' },
        channel_type: 'webhook',
        channel_id: hook.id,
      },
    });
    expect(alert.status, alert.text).toBe(201);

    failuresLeft = Infinity;
    const first = await goesDown('first-down');
    await until('the webhook disabled', async () => (await webhookRow(hook.id)).is_enabled === 0);
    const row = await webhookRow(hook.id);
    expect(row).toMatchObject({ disabled_reason: 'failing', consecutive_failures: 10 });
    expect(posts(first)).toHaveLength(10);
    // Every request used the same delivery id.
    expect(new Set(posts(first).map((request) => request.headers['x-service-delivery'])).size).toBe(1);
    await t.jobsSettled();
    const [held] = await notificationsOf(first);
    expect(held.status).toBe('held');
    const detail = await t.request('GET', `/api/v1/notification/${held.id}`);
    expect(detail.body.deliveries[0].attempts).toHaveLength(10);
    expect(detail.body.deliveries[0].attempts[0]).toMatchObject({
      status_code: 503,
      failure: 'bad_status',
      response: 'down for maintenance',
    });
    const owner = await t.ctx.db.selectFrom('email_outbox').select('subject').execute();
    expect(owner.map((email) => email.subject)).toContain(
      'Webhook "Flaky" was disabled after 10 failed notifications',
    );

    // Two more while it is disabled: held, nothing sent.
    const second = await goesDown('second-down');
    const third = await goesDown('third-down');
    await t.jobsSettled();
    expect(posts(second)).toHaveLength(0);
    expect((await notificationsOf(third))[0].status).toBe('held');

    failuresLeft = 0;
    const verified = await t.request('POST', `/api/v1/webhook/${hook.id}/verify`);
    expect(verified.body.status).toBe('SUCCESS');
    await until(
      'the held notifications delivered',
      () => posts(third).length === 1 && posts(second).length === 1,
    );
    await t.jobsSettled();
    const order = endpoint.receiver.requests
      .filter((r) => r.method === 'POST')
      .slice(-3)
      .map((r) => (JSON.parse(r.body) as { node: { name: string } }).node.name);
    // Released oldest first; with several requests in flight per webhook they may arrive in any order,
    // which is why every body carries its resource's sequence.
    expect(order.sort()).toEqual(['first-down', 'second-down', 'third-down']);
    expect((await notificationsOf(first))[0].status).toBe('delivered');
    expect((await webhookRow(hook.id)).consecutive_failures).toBe(0);
    await t.request('DELETE', `/api/v1/mysubscriptions/${alert.body.id}`);
  });

  it('resets the count on a success in between', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Recovers' });
    await t.request('POST', '/api/v1/mysubscriptions', {
      body: {
        name: 'Down again',
        type: 'NODE_STATE_CHANGE',
        settings: { org_id: orgId, alert_me: 'UNREACHABLE' },
        channel_type: 'webhook',
        channel_id: hook.id,
      },
    });
    // Three failures in a row, then a success: with no retry delay they follow each other at once.
    failuresLeft = 3;
    const node = await goesDown('recovering');
    await until('the delivery', async () => {
      const notifications = await notificationsOf(node);
      return notifications.length === 1 && notifications[0].status === 'delivered';
    });
    const row = await webhookRow(hook.id);
    expect(row).toMatchObject({ is_enabled: 1, consecutive_failures: 0 });
    expect(posts(node)).toHaveLength(4);
  });

  it('sends nothing to an edited webhook before it is verified again', async () => {
    failuresLeft = 0;
    const hook = await enabledWebhook(t, endpoint, { name: 'Moves' });
    const created = await t.request('POST', '/api/v1/mysubscriptions', {
      body: {
        name: 'Down, moved',
        type: 'NODE_STATE_CHANGE',
        settings: { org_id: orgId, alert_me: 'UNREACHABLE' },
        channel_type: 'webhook',
        channel_id: hook.id,
      },
    });
    const edited = await t.request('PUT', `/api/v1/webhook/${hook.id}`, {
      body: { url: `${endpoint.receiver.url}/moved` },
    });
    expect(edited.status, edited.text).toBe(200);
    const node = await goesDown('after-the-move');
    await t.jobsSettled();
    const toMoved = () => endpoint.receiver.requests.filter((r) => r.method === 'POST' && r.url === '/moved');
    expect(toMoved()).toHaveLength(0);
    const ours = (await notificationsOf(node)).filter((n) => n.alert.id === created.body.id);
    expect(ours.map((n) => n.status)).toEqual(['held']);

    expect((await t.request('POST', `/api/v1/webhook/${hook.id}/verify`)).body.status).toBe('SUCCESS');
    await until('the held notification at the new URL', () => toMoved().length === 1);
    await t.request('DELETE', `/api/v1/mysubscriptions/${created.body.id}`);
  });
});
