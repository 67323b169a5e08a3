import type { AppContext } from '../../context.js';
import type { DeliveryStatus, Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import { DELIVERIES_WAKE } from './dispatcher.js';
import * as repo from './repo.js';

/**
 * A notification's delivery to a webhook, in the notification's transaction: pending (due now) when the
 * webhook is enabled, held (sent once it is verified again) when not. The webhook is read under a share
 * lock, so an edit or a failure that disables it either commits first (and the delivery is born held) or
 * waits for this transaction (and holds the delivery with the rest). Returns the delivery's status.
 */
export async function startDelivery(
  ctx: AppContext,
  trx: Executor,
  notificationId: string,
  webhookId: string,
  now: number,
): Promise<DeliveryStatus> {
  const enabled = await repo.readWebhookEnabled(trx, webhookId);
  const status: DeliveryStatus = enabled ? 'pending' : 'held';
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
  if (status === 'pending') await ctx.jobs.wakeAfterCommit(trx, DELIVERIES_WAKE);
  return status;
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
