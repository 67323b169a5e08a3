import { sql } from 'kysely';
import { paginate } from '../../db/paginate.js';
import type { DeliveryStatus, Executor } from '../../db/types.js';
import type { Page, PageRequest } from '../../http/lists.js';

export interface DeliveryLogFilters {
  webhookId: string;
  status?: DeliveryStatus;
  from?: number;
  to?: number;
}

function withNotification(db: Executor) {
  return db
    .selectFrom('deliveries')
    .innerJoin('notifications', 'notifications.id', 'deliveries.notification_id')
    .selectAll('deliveries')
    .select([
      'notifications.alert_id',
      'notifications.alert_name',
      'notifications.type',
      'notifications.user_id',
      'notifications.org_id',
      'notifications.node_id',
      'notifications.payload',
    ]);
}

export type DeliveryLogRow = Awaited<
  ReturnType<ReturnType<typeof withNotification>['executeTakeFirstOrThrow']>
>;

/** A page of a webhook's deliveries, newest first. */
export async function listDeliveries(
  db: Executor,
  filters: DeliveryLogFilters,
  page: PageRequest,
): Promise<Page<DeliveryLogRow>> {
  let query = withNotification(db).where('deliveries.webhook_id', '=', filters.webhookId);
  if (filters.status !== undefined) query = query.where('deliveries.status', '=', filters.status);
  if (filters.from !== undefined) query = query.where('deliveries.created_at', '>=', filters.from);
  if (filters.to !== undefined) query = query.where('deliveries.created_at', '<=', filters.to);
  return paginate(db, query.orderBy('deliveries.created_at', 'desc').orderBy('deliveries.id', 'desc'), page);
}

export async function findDelivery(
  db: Executor,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryLogRow | undefined> {
  return withNotification(db)
    .where('deliveries.id', '=', deliveryId)
    .where('deliveries.webhook_id', '=', webhookId)
    .executeTakeFirst();
}

export type DeliveryAttemptRow = Awaited<ReturnType<typeof attemptsOf>>[number];

/**
 * Every request made for these deliveries, oldest first: the log's rows, and the success a delivery keeps
 * on its own row until a replay logs it (migration 0028).
 */
export async function attemptsOf(db: Executor, deliveryIds: readonly string[]) {
  if (deliveryIds.length === 0) return [];
  const logged = db
    .selectFrom('delivery_attempts')
    .select(['id', 'delivery_id', 'at', 'duration_ms', 'status_code', 'failure', 'error', 'response'])
    .where('delivery_id', 'in', deliveryIds);
  const kept = db
    .selectFrom('deliveries')
    .select((eb) => [
      'id',
      'id as delivery_id',
      eb.fn.coalesce('last_attempt_at', eb.lit(0)).as('at'),
      eb.fn.coalesce('success_duration_ms', eb.lit(0)).as('duration_ms'),
      'last_status_code as status_code',
      sql<string | null>`null`.as('failure'),
      sql<string | null>`null`.as('error'),
      'success_response as response',
    ])
    .where('id', 'in', deliveryIds)
    .where('success_duration_ms', 'is not', null);
  return db
    .selectFrom(logged.unionAll(kept).as('attempts'))
    .selectAll()
    .orderBy('at')
    .orderBy('id')
    .execute();
}

/** A delivery still on its way (pending) or waiting for its webhook (held) is not sent again by a replay. */
export const REPLAYABLE: DeliveryStatus[] = ['delivered', 'failed', 'expired'];

/** The webhook's deliveries made since `since` that a replay sends again, oldest first. */
export async function replayable(db: Executor, webhookId: string, since: number) {
  return db
    .selectFrom('deliveries')
    .select(['id', 'notification_id'])
    .where('webhook_id', '=', webhookId)
    .where('created_at', '>=', since)
    .where('status', 'in', REPLAYABLE)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
