import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesWaiting, startDeliveryFixture, type DeliveryFixture } from './support/delivery-fixture.js';
import { dialect, type TestApp } from './support/harness.js';
import { lockWaiters } from './support/locks.js';

/**
 * One lock order for deliveries and their notifications: every writer changes a delivery, then its
 * notification (docs/deliveries.md#locks). Here a disabling (an edit holds what is pending) meets a success
 * whose transaction has written its delivery and notification and not yet committed: the hold waits at the
 * delivery, sees the success, and holds neither. In the other order it held the notification of a delivered
 * delivery for good.
 */

let fx: DeliveryFixture;
let t: TestApp;

beforeAll(async () => {
  fx = await startDeliveryFixture({ background: false });
  t = fx.t;
});
afterAll(() => fx.close());

describe('a hold and a success at once', () => {
  it('leaves a delivered delivery and its notification delivered', async () => {
    const { webhookId, deliveryIds, notificationIds } = await deliveriesWaiting(fx);
    const delivery = { id: deliveryIds[0]!, notification_id: notificationIds[0]! };

    // The success's transaction, written as a batch of successes writes it: the delivery, then its
    // notification; held open until the hold waits behind it.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => (written = resolve));
    const success = t.ctx.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('deliveries')
        .set({ status: 'delivered', next_attempt_at: null })
        .where('id', '=', delivery.id)
        .execute();
      await trx
        .updateTable('notifications')
        .set({ status: 'delivered' })
        .where('id', '=', delivery.notification_id)
        .execute();
      written();
      await released;
    });
    await wrote;
    const edit = t.request('PUT', `/api/v1/webhook/${webhookId}`, {
      body: { name: 'Edited during a success' },
    });
    if (dialect === 'postgres') await lockWaiters(t, 1);
    release();
    await success;
    expect((await edit).status).toBe(200);

    const after = await t.ctx.db
      .selectFrom('deliveries')
      .innerJoin('notifications', 'notifications.id', 'deliveries.notification_id')
      .select(['deliveries.status as delivery', 'notifications.status as notification'])
      .where('deliveries.id', '=', delivery.id)
      .executeTakeFirstOrThrow();
    expect(after).toEqual({ delivery: 'delivered', notification: 'delivered' });
  });
});
