import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesWaiting, startDeliveryFixture, type DeliveryFixture } from './support/delivery-fixture.js';
import type { TestApp } from './support/harness.js';
import { correctEndpoint, type ReceiverWithSecret } from './support/webhooks.js';

/**
 * Whatever goes wrong between a delivery's claim and its answer is a failed attempt with its reason: it is
 * recorded, counted towards the webhook's failures and logged at error, never left pending and silent
 * (docs/rules/webhooks.md#deliveries). The dispatcher is driven by hand (runDue), on both databases.
 */

let fx: DeliveryFixture;
let t: TestApp;
let endpoint: ReceiverWithSecret;

beforeAll(async () => {
  // A failure waits an hour: whatever goes out before then was made due by something else.
  const env = { MAX_WEBHOOKS_PER_USER: '10', DELIVERY_RETRY_SCHEDULE: '1h' };
  fx = await startDeliveryFixture({ env, background: false });
  ({ t, endpoint } = fx);
});
afterAll(() => fx.close());

/** A verified webhook with one notification for it waiting to be sent. */
async function oneDeliveryWaiting(): Promise<{ webhookId: string; deliveryId: string }> {
  const { webhookId, deliveryIds } = await deliveriesWaiting(fx);
  return { webhookId, deliveryId: deliveryIds[0]! };
}

async function outcome(webhookId: string, deliveryId: string) {
  const delivery = await t.ctx.db
    .selectFrom('deliveries')
    .select(['status', 'next_attempt_at', 'lease_until'])
    .where('id', '=', deliveryId)
    .executeTakeFirstOrThrow();
  const attempts = await t.ctx.db
    .selectFrom('delivery_attempts')
    .select(['failure', 'error', 'status_code'])
    .where('delivery_id', '=', deliveryId)
    .execute();
  const webhook = await t.ctx.db
    .selectFrom('webhooks')
    .select(['consecutive_failures', 'retry_at'])
    .where('id', '=', webhookId)
    .executeTakeFirstOrThrow();
  return { delivery, attempts, webhook };
}

/** Answers the notification with raw bytes, as a broken endpoint would. */
function answerRaw(bytes: string) {
  return (request: { method: string }, response: ServerResponse) => {
    if (request.method !== 'POST')
      return correctEndpoint(() => endpoint.secret.value)(request as never, response);
    response.socket?.end(bytes);
  };
}

describe('a delivery whose request throws', () => {
  it('records a secret that cannot be opened as a failed attempt, counted and logged at error', async () => {
    const { webhookId, deliveryId } = await oneDeliveryWaiting();
    await t.ctx.db
      .updateTable('webhooks')
      .set({ secret_sealed: 'not-a-sealed-secret' })
      .where('id', '=', webhookId)
      .execute();
    const logged = t.logs.length;
    expect(await t.dispatcher.runDue()).toBe(1);
    const { delivery, attempts, webhook } = await outcome(webhookId, deliveryId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ failure: 'unexpected', status_code: null });
    expect(attempts[0]!.error).toContain('the request failed unexpectedly');
    expect(delivery.status).toBe('pending');
    expect(delivery.lease_until).toBeNull();
    expect(delivery.next_attempt_at).not.toBeNull();
    expect(webhook.consecutive_failures).toBe(1);
    const errors = t.logs
      .slice(logged)
      .map((line) => JSON.parse(line) as { level: number; delivery?: string });
    expect(errors.some((line) => line.level === 50 && line.delivery === deliveryId)).toBe(true);
  });

  it.each([
    ['a status line that is not HTTP', 'HELLO THERE\r\n\r\n', 'bad_status'],
    [
      'a 40 KB header',
      `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(40_000)}\r\nContent-Length: 0\r\n\r\n`,
      'bad_status',
    ],
    [
      'broken chunked encoding',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n',
      'bad_status',
    ],
    [
      'a body shorter than its Content-Length',
      'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort',
      'refused',
    ],
  ])('records %s as a failed attempt, counted', async (_name, bytes, failure) => {
    const { webhookId, deliveryId } = await oneDeliveryWaiting();
    endpoint.receiver.handle(answerRaw(bytes));
    expect(await t.dispatcher.runDue()).toBe(1);
    const { delivery, attempts, webhook } = await outcome(webhookId, deliveryId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.failure).toBe(failure);
    expect(attempts[0]!.error).toEqual(expect.any(String));
    expect(delivery.status).toBe('pending');
    expect(delivery.lease_until).toBeNull();
    expect(webhook.consecutive_failures).toBe(1);
  });
});

describe('a probe that succeeds', () => {
  /** Five deliveries that failed together: one counted failure, and all of them waiting an hour. */
  async function afterAFailedBurst() {
    const waiting = await deliveriesWaiting(fx, 5);
    endpoint.receiver.handle((request, response) => {
      if (request.method !== 'POST') return correctEndpoint(() => endpoint.secret.value)(request, response);
      response.writeHead(503).end('busy');
    });
    expect(await t.dispatcher.runDue()).toBe(5);
    const { webhook } = await outcome(waiting.webhookId, waiting.deliveryIds[0]!);
    expect(webhook.consecutive_failures).toBe(1);
    expect(Number(webhook.retry_at)).toBeGreaterThan(Date.now() + 40 * 60_000);
    endpoint.receiver.handle(correctEndpoint(() => endpoint.secret.value));
    return waiting;
  }

  async function statuses(deliveryIds: string[]) {
    const rows = await t.ctx.db
      .selectFrom('deliveries')
      .select('status')
      .where('id', 'in', deliveryIds)
      .execute();
    return rows.map((row) => row.status);
  }

  it('a retry asked for that succeeds makes the others due at once', async () => {
    const { webhookId, deliveryIds } = await afterAFailedBurst();
    const retried = await t.request(
      'POST',
      `/api/v1/webhook/${webhookId}/deliveries/${deliveryIds[2]}/retry`,
    );
    expect(retried.status, retried.text).toBe(202);
    // The retried one probes; its success opens the gate and makes the four others due now, not in an hour.
    expect(await t.dispatcher.runDue()).toBe(5);
    expect(await statuses(deliveryIds)).toEqual(Array(5).fill('delivered'));
    expect((await outcome(webhookId, deliveryIds[0]!)).webhook).toEqual({
      consecutive_failures: 0,
      retry_at: null,
    });
  });

  it('a test that succeeds opens the gate and makes everything waiting due at once', async () => {
    const { webhookId, deliveryIds } = await afterAFailedBurst();
    const tested = await t.request('POST', `/api/v1/webhook/${webhookId}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(tested.body.status).toBe(200);
    expect(await t.dispatcher.runDue()).toBe(5);
    expect(await statuses(deliveryIds)).toEqual(Array(5).fill('delivered'));
  });

  it('a test that fails changes nothing', async () => {
    const { webhookId, deliveryIds } = await afterAFailedBurst();
    endpoint.receiver.handle((request, response) => {
      if (request.method !== 'POST') return correctEndpoint(() => endpoint.secret.value)(request, response);
      response.writeHead(500).end('still down');
    });
    const tested = await t.request('POST', `/api/v1/webhook/${webhookId}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(tested.body.status).toBe(500);
    expect(await t.dispatcher.runDue()).toBe(0);
    expect(await statuses(deliveryIds)).toEqual(Array(5).fill('pending'));
  });
});
