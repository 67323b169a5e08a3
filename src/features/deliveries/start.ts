import type { AppContext } from '../../context.js';
import type { DeliveryStatus, Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import { DELIVERIES_WAKE } from './dispatcher.js';
import * as repo from './repo.js';

/**
 * A notification's delivery to a webhook, in the notification's transaction: pending (due now) when the
 * webhook was read enabled, held (sent once it is verified again) when not. Should its state change before
 * this commits, the next claim puts the delivery right (docs/deliveries.md#locks).
 */
export async function startDelivery(
  ctx: AppContext,
  trx: Executor,
  notificationId: string,
  webhookId: string,
  status: 'pending' | 'held',
  now: number,
): Promise<void> {
  await trx
    .insertInto('deliveries')
    .values({
      id: newId(now),
      notification_id: notificationId,
      webhook_id: webhookId,
      status,
      attempts: 0,
      last_attempt_at: null,
      // Due at once on the queue's clock (the database's on PostgreSQL), whatever clock dated the change.
      next_attempt_at: status === 'pending' ? ctx.jobs.now(trx) : null,
      lease_until: null,
      last_status_code: null,
      last_error: null,
      created_at: now,
      delivered_at: null,
    })
    .execute();
  // Held ones too: a claim puts right one whose webhook was enabled meanwhile.
  await ctx.jobs.wakeAfterCommit(trx, DELIVERIES_WAKE);
}

/**
 * Deliveries sent (again) from now, in the caller's transaction, oldest first: pending and due, their
 * notifications pending; only those still in one of the statuses `from` when the transaction writes.
 * With `retryRequested`, each is its webhook's next request even before its retry time. Returns how many.
 */
export async function requeueDeliveries(
  ctx: AppContext,
  trx: Executor,
  deliveries: readonly { id: string; notification_id: string }[],
  from: readonly DeliveryStatus[],
  options: { retryRequested?: boolean } = {},
): Promise<number> {
  const moved = await repo.makePending(trx, deliveries, from, ctx.jobs.now(trx), options);
  if (moved > 0) await ctx.jobs.wakeAfterCommit(trx, DELIVERIES_WAKE);
  return moved;
}
