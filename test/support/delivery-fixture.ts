import { expect } from 'vitest';
import { aliveNode } from './fleet.js';
import { startTestApp, type TestApp, type TestAppOptions } from './harness.js';
import {
  correctEndpoint,
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './webhooks.js';

/**
 * The service with its webhook client trusting the test CA, and a correct HTTPS receiver: what every test of
 * the delivery path starts from. `env` adds to the receiver's access settings.
 */
export interface DeliveryFixture {
  t: TestApp;
  endpoint: ReceiverWithSecret;
  /** The admin's organization. */
  orgId: string;
  close(): Promise<void>;
}

export async function startDeliveryFixture(
  options: Omit<TestAppOptions, 'extraTrustedCertificates'> = {},
): Promise<DeliveryFixture> {
  const endpoint = await startCorrectReceiver();
  const access = receiverAccess();
  const t = await startTestApp({ ...options, ...access, env: { ...access.env, ...options.env } });
  const orgId = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  return {
    t,
    endpoint,
    orgId,
    async close() {
      await t.close();
      await endpoint.receiver.close();
    },
  };
}

let made = 0;

/** A verified webhook to the fixture's receiver, with a TUNNEL_STATE_CHANGE alert of the admin's on it. */
export async function webhookWithAlert(
  fx: DeliveryFixture,
  name = `Hook ${made + 1}`,
): Promise<{ webhookId: string; alertId: string }> {
  made += 1;
  // Verifying needs the receiver's right answer, whatever a test made it answer before.
  fx.endpoint.receiver.handle(correctEndpoint(() => fx.endpoint.secret.value));
  const hook = await enabledWebhook(fx.t, fx.endpoint, { name });
  const alert = await fx.t.request('POST', '/api/v1/mysubscriptions', {
    body: {
      name: `${name} tunnels`,
      type: 'TUNNEL_STATE_CHANGE',
      settings: { org_id: fx.orgId },
      channel_type: 'webhook',
      channel_id: hook.id,
    },
  });
  expect(alert.status, alert.text).toBe(201);
  return { webhookId: hook.id, alertId: alert.body.id as string };
}

/** A report body with a new CONNECTED tunnel for each key. */
export const tunnels = (...keys: string[]) => ({
  tunnels: keys.map((key) => ({ key, name: key, state: 'CONNECTED' })),
});

/**
 * A webhook with `count` notifications waiting to be sent (one report of a new node with `count` new tunnels),
 * its alert deleted again, so that later reports make nothing more for it. Deliveries oldest first.
 */
export async function deliveriesWaiting(
  fx: DeliveryFixture,
  count = 1,
): Promise<{ webhookId: string; deliveryIds: string[]; notificationIds: string[] }> {
  const { webhookId, alertId } = await webhookWithAlert(fx);
  const keys = Array.from({ length: count }, (_, i) => `wg${i}`);
  await aliveNode(fx.t, `waiting-${made}`, { report: tunnels(...keys) });
  await fx.t.request('DELETE', `/api/v1/mysubscriptions/${alertId}`);
  const rows = await fx.t.ctx.db
    .selectFrom('deliveries')
    .select(['id', 'notification_id'])
    .where('webhook_id', '=', webhookId)
    .orderBy('id')
    .execute();
  expect(rows).toHaveLength(count);
  return {
    webhookId,
    deliveryIds: rows.map((row) => row.id),
    notificationIds: rows.map((row) => row.notification_id),
  };
}
