import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireAllHeld } from '../src/features/deliveries/release.js';
import { pruneNotifications } from '../src/features/notifications/repo.js';
import { deliveriesWaiting, startDeliveryFixture, type DeliveryFixture } from './support/delivery-fixture.js';
import type { TestApp } from './support/harness.js';

/**
 * Retention never touches a delivery in flight: neither the expiry of held notifications nor the pruning of
 * old ones. Each is forced while a claimed request is out (the dispatcher paused between its claim and the
 * request), on both databases; the delivery's outcome is then the one written.
 */

const DAY_MS = 86_400_000;
let fx: DeliveryFixture;
let t: TestApp;
let whileInFlight: (() => Promise<void>) | undefined;

beforeAll(async () => {
  fx = await startDeliveryFixture({
    background: false,
    pauses: { afterClaim: async () => whileInFlight?.() },
  });
  t = fx.t;
});
afterAll(() => fx.close());

/** A webhook with one delivery waiting. */
async function oneDeliveryWaiting() {
  const { webhookId, deliveryIds, notificationIds } = await deliveriesWaiting(fx);
  return { webhookId, id: deliveryIds[0]!, notification_id: notificationIds[0]! };
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
