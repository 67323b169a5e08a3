import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireAllHeld } from '../src/features/deliveries/release.js';
import { pruneNotifications } from '../src/features/notifications/repo.js';
import { aliveNode } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
import {
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

/**
 * Retention never touches a delivery in flight: neither the expiry of held notifications nor the pruning of
 * old ones. Each is forced while a claimed request is out (the dispatcher paused between its claim and the
 * request), on both databases; the delivery's outcome is then the one written.
 */

const DAY_MS = 86_400_000;
let t: TestApp;
let endpoint: ReceiverWithSecret;
let orgId: string;
let whileInFlight: (() => Promise<void>) | undefined;
let nodes = 0;

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  const access = receiverAccess();
  t = await startTestApp({
    ...access,
    background: false,
    pauses: { afterClaim: async () => whileInFlight?.() },
  });
  orgId = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

/** A webhook with one delivery waiting, its alert deleted again so that nothing else is made for it. */
async function oneDeliveryWaiting() {
  nodes += 1;
  const hook = await enabledWebhook(t, endpoint, { name: `Kept ${nodes}` });
  const alert = await t.request('POST', '/api/v1/mysubscriptions', {
    body: {
      name: 'Tunnels',
      type: 'TUNNEL_STATE_CHANGE',
      settings: { org_id: orgId },
      channel_type: 'webhook',
      channel_id: hook.id,
    },
  });
  await aliveNode(t, `kept-${nodes}`, {
    report: { tunnels: [{ key: 'wg0', name: 'wg0', state: 'CONNECTED' }] },
  });
  await t.request('DELETE', `/api/v1/mysubscriptions/${alert.body.id}`);
  const delivery = await t.ctx.db
    .selectFrom('deliveries')
    .select(['id', 'notification_id'])
    .where('webhook_id', '=', hook.id)
    .executeTakeFirstOrThrow();
  return { webhookId: hook.id, ...delivery };
}

async function statusOf(deliveryId: string) {
  const row = await t.ctx.db
    .selectFrom('deliveries')
    .innerJoin('notifications', 'notifications.id', 'deliveries.notification_id')
    .select(['deliveries.status as delivery', 'notifications.status as notification'])
    .where('deliveries.id', '=', deliveryId)
    .executeTakeFirst();
  return row;
}

describe('retention and a delivery in flight', () => {
  it('does not expire a held delivery whose request is out; its outcome is recorded', async () => {
    const { webhookId, id } = await oneDeliveryWaiting();
    let during: Awaited<ReturnType<typeof statusOf>>;
    whileInFlight = async () => {
      whileInFlight = undefined;
      // An edit disables the webhook while the request is out: the delivery is held, still leased.
      await t.request('PUT', `/api/v1/webhook/${webhookId}`, { body: { name: 'Edited while in flight' } });
      // Retention runs as if a week had passed.
      await expireAllHeld(t.ctx.db, Date.now() + 8 * DAY_MS);
      during = await statusOf(id);
    };
    expect(await t.dispatcher.runDue()).toBe(1);
    expect(during).toEqual({ delivery: 'held', notification: 'held' });
    // The request was out before the edit: its 2xx is what happened.
    expect(await statusOf(id)).toEqual({ delivery: 'delivered', notification: 'delivered' });
    // Once no request is out, a held delivery past its limits does expire.
    const later = await oneDeliveryWaiting();
    await t.request('PUT', `/api/v1/webhook/${later.webhookId}`, { body: { name: 'Edited' } });
    await expireAllHeld(t.ctx.db, Date.now() + 8 * DAY_MS);
    expect(await statusOf(later.id)).toEqual({ delivery: 'expired', notification: 'expired' });
  });

  it('does not prune a notification whose delivery is in flight; the next run does', async () => {
    const { id, notification_id: notificationId } = await oneDeliveryWaiting();
    whileInFlight = async () => {
      whileInFlight = undefined;
      await pruneNotifications(t.ctx.db, Date.now() + DAY_MS);
    };
    expect(await t.dispatcher.runDue()).toBe(1);
    expect(await statusOf(id)).toEqual({ delivery: 'delivered', notification: 'delivered' });
    await pruneNotifications(t.ctx.db, Date.now() + DAY_MS);
    const left = await t.ctx.db
      .selectFrom('notifications')
      .select('id')
      .where('id', '=', notificationId)
      .execute();
    expect(left).toEqual([]);
  });
});
