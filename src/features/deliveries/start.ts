import type { AppContext } from '../../context.js';
import type { DeliveryStatus, Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import { activeTraceparent } from '../../observability/tracing.js';
import { DELIVERIES_WAKE } from './dispatcher.js';
import * as repo from './repo.js';

/** The notification a delivery is made for: what sending it needs. */
export interface NotificationToDeliver {
  id: string;
  payload: string;
  occurred_at: number;
}

/**
 * A notification's delivery to a webhook, in the notification's transaction: pending (due now) when the
 * webhook is enabled, held (sent once it is verified again) when not, as one statement reads it
 * (repo.insertDelivery). Returns the status, or undefined when the webhook was deleted meanwhile (with the
 * alert behind the notification): then no delivery is made. The commit wakes the dispatchers, which claim
 * it (docs/deliveries.md).
 */
export async function startDelivery(
  ctx: AppContext,
  trx: Executor,
  notification: NotificationToDeliver,
  webhookId: string,
  now: number,
): Promise<'pending' | 'held' | undefined> {
  // Due on the clock of due times and leases (the database's on PostgreSQL), whatever clock dated the change.
  const queueNow = ctx.jobs.preparedNow(trx);
  const delivery = {
    id: newId(now),
    notificationId: notification.id,
    webhookId,
    createdAt: now,
    traceparent: activeTraceparent(),
  };
  const status = await repo.insertDelivery(trx, delivery, queueNow);
  // Held ones too: a claim puts right one whose webhook was enabled meanwhile.
  if (status !== undefined) await ctx.jobs.wakeAfterCommit(trx, DELIVERIES_WAKE);
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
