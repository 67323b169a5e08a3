import type { AppContext } from '../../context.js';
import type { DeliveryStatus, Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';

export const WEBHOOK_DELIVERY = 'webhook.deliver';
export interface DeliveryJob {
  deliveryId: string;
}
/** A delivery retries until it is delivered or its webhook is disabled (then it is held). */
export const DELIVERY_MAX_ATTEMPTS = 1_000_000;

/**
 * A notification's delivery to a webhook, in the notification's transaction: pending with its job when
 * the webhook is enabled, held (sent once it is verified again) when not. Returns the delivery status.
 */
export async function startDelivery(
  ctx: AppContext,
  trx: Executor,
  notificationId: string,
  webhook: { id: string; is_enabled: number },
  now: number,
): Promise<DeliveryStatus> {
  const id = newId(now);
  const status: DeliveryStatus = webhook.is_enabled === 1 ? 'pending' : 'held';
  await trx
    .insertInto('deliveries')
    .values({
      id,
      notification_id: notificationId,
      webhook_id: webhook.id,
      status,
      attempts: 0,
      last_attempt_at: null,
      next_attempt_at: status === 'pending' ? now : null,
      last_status_code: null,
      last_error: null,
      created_at: now,
      delivered_at: null,
    })
    .execute();
  if (status === 'pending') await enqueueDeliveries(ctx, trx, [id]);
  return status;
}

/** One job per delivery, due now, keyed by it (never queued twice), in the caller's transaction. */
export async function enqueueDeliveries(
  ctx: AppContext,
  trx: Executor,
  deliveryIds: readonly string[],
): Promise<void> {
  await ctx.jobs.enqueueMany(
    trx,
    deliveryIds.map((deliveryId) => ({
      kind: WEBHOOK_DELIVERY,
      payload: { deliveryId } satisfies DeliveryJob,
      options: { key: deliveryId, maxAttempts: DELIVERY_MAX_ATTEMPTS },
    })),
  );
}

/** Statements touch at most this many deliveries (SQLite's limit on bound values stays far away). */
const REQUEUE_CHUNK = 500;

/**
 * Deliveries sent (again) from now: pending with their jobs, their notifications pending, in the caller's
 * transaction, in the order given (the jobs' ids, and so their order, follow it).
 */
export async function requeueDeliveries(
  ctx: AppContext,
  trx: Executor,
  deliveries: readonly { id: string; notification_id: string }[],
): Promise<void> {
  const now = ctx.clock.now();
  for (let start = 0; start < deliveries.length; start += REQUEUE_CHUNK) {
    const chunk = deliveries.slice(start, start + REQUEUE_CHUNK);
    await trx
      .updateTable('deliveries')
      .set({ status: 'pending', next_attempt_at: now })
      .where(
        'id',
        'in',
        chunk.map((delivery) => delivery.id),
      )
      .execute();
    await trx
      .updateTable('notifications')
      .set({ status: 'pending' })
      .where(
        'id',
        'in',
        chunk.map((delivery) => delivery.notification_id),
      )
      .execute();
    await enqueueDeliveries(
      ctx,
      trx,
      chunk.map((delivery) => delivery.id),
    );
  }
}
