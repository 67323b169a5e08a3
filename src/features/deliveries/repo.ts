import { jsonObjectFrom } from 'kysely/helpers/postgres';
import { isPostgres } from '../../db/connect.js';
import type { Executor } from '../../db/types.js';
import type { ReadAlong } from '../../jobs/repo.js';

/** Deliveries with what sending them needs: the body and the webhook. */
function deliveriesToSend(db: Executor) {
  return db
    .selectFrom('deliveries')
    .innerJoin('notifications', 'notifications.id', 'deliveries.notification_id')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .select([
      'deliveries.id',
      'deliveries.status',
      'deliveries.notification_id',
      'notifications.payload',
      'notifications.occurred_at',
      'webhooks.id as webhook_id',
      'webhooks.user_id as owner_id',
      'webhooks.name as webhook_name',
      'webhooks.url',
      'webhooks.headers',
      'webhooks.secret_sealed',
      'webhooks.is_enabled',
      'webhooks.consecutive_failures',
      'webhooks.retry_at',
      'webhooks.probe_until',
    ]);
}

/** The deliveries with these ids, in the order of `ids` (undefined for one that is gone). */
export async function findDeliveriesToSend(db: Executor, ids: readonly string[]) {
  const rows = await deliveriesToSend(db).where('deliveries.id', 'in', ids).execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id));
}

/**
 * PostgreSQL: the delivery a job is keyed by, as one JSON value, for the claim to read along (its numbers
 * and strings come back as the row's own: no column here is a type JSON would change).
 */
export function deliveryToSendByKey(db: Executor): ReadAlong {
  return (key) => jsonObjectFrom(deliveriesToSend(db).where('deliveries.id', '=', key));
}

export type DeliveryToSend = NonNullable<Awaited<ReturnType<typeof findDeliveriesToSend>>[number]>;

/** While a webhook fails, one request probes it at a time: true when this caller may. */
export async function takeProbe(
  db: Executor,
  webhookId: string,
  now: number,
  until: number,
): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ probe_until: until })
    .where('id', '=', webhookId)
    .where('consecutive_failures', '>', 0)
    .where((eb) => eb.or([eb('probe_until', 'is', null), eb('probe_until', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export interface AttemptRecord {
  id: string;
  deliveryId: string;
  at: number;
  durationMs: number;
  statusCode: number | null;
  failure: string | null;
  error: string | null;
  response: string | null;
}

function attemptRow(attempt: AttemptRecord) {
  return {
    id: attempt.id,
    delivery_id: attempt.deliveryId,
    at: attempt.at,
    duration_ms: attempt.durationMs,
    status_code: attempt.statusCode,
    failure: attempt.failure,
    error: attempt.error,
    response: attempt.response,
  };
}

export async function insertAttempt(db: Executor, attempt: AttemptRecord): Promise<void> {
  await db.insertInto('delivery_attempts').values(attemptRow(attempt)).execute();
}

/** A successful request, as recorded with others in one go; its job ends with it. */
export interface Delivered {
  notificationId: string;
  webhookId: string;
  jobId: string;
  attempt: AttemptRecord;
}

/**
 * Records successful requests: their attempts, their deliveries and notifications delivered, their
 * webhooks' failure counts reset, their jobs deleted; together, however many there are. On PostgreSQL
 * that is one statement (the writes as data-modifying WITH clauses), so the worker's round trips per
 * batch stay few; SQLite has no such clauses and runs the five in the caller's transaction.
 */
export async function recordDelivered(db: Executor, done: readonly Delivered[]): Promise<void> {
  if (done.length === 0) return;
  const webhookIds = [...new Set(done.map((item) => item.webhookId))];
  if (isPostgres(db)) {
    await db
      .with('attempts', () => insertAttempts(db, done))
      .with('deliveries_done', () => markDeliveriesDelivered(db, done))
      .with('notifications_done', () => markNotificationsDelivered(db, done))
      .with('webhooks_done', () => clearWebhookFailures(db, webhookIds))
      .deleteFrom('jobs')
      .where('id', 'in', jobIdsOf(done))
      .execute();
    return;
  }
  await insertAttempts(db, done).execute();
  await markDeliveriesDelivered(db, done).execute();
  await markNotificationsDelivered(db, done).execute();
  await clearWebhookFailures(db, webhookIds).execute();
  await db.deleteFrom('jobs').where('id', 'in', jobIdsOf(done)).execute();
}

function insertAttempts(db: Executor, done: readonly Delivered[]) {
  return db.insertInto('delivery_attempts').values(done.map((item) => attemptRow(item.attempt)));
}

function markDeliveriesDelivered(db: Executor, done: readonly Delivered[]) {
  return db
    .updateTable('deliveries')
    .set((eb) => {
      // One value per delivery: CASE id WHEN … THEN …, cast so PostgreSQL knows the parameters' type.
      const perDelivery = (value: (attempt: AttemptRecord) => number, type: 'bigint' | 'integer') => {
        const [first, ...rest] = done;
        if (first === undefined) throw new Error('unreachable: done is not empty');
        let cases = eb
          .case('id')
          .when(first.attempt.deliveryId)
          .then(eb.cast<number>(eb.val(value(first.attempt)), type));
        for (const item of rest) {
          cases = cases
            .when(item.attempt.deliveryId)
            .then(eb.cast<number>(eb.val(value(item.attempt)), type));
        }
        return cases.end();
      };
      return {
        status: 'delivered',
        attempts: eb('attempts', '+', 1),
        last_attempt_at: perDelivery((attempt) => attempt.at, 'bigint'),
        last_status_code: perDelivery((attempt) => attempt.statusCode ?? 0, 'integer'),
        last_error: null,
        delivered_at: perDelivery((attempt) => attempt.at + attempt.durationMs, 'bigint'),
        next_attempt_at: null,
      };
    })
    .where(
      'id',
      'in',
      done.map((item) => item.attempt.deliveryId),
    );
}

function jobIdsOf(done: readonly Delivered[]) {
  return done.map((item) => item.jobId);
}

function markNotificationsDelivered(db: Executor, done: readonly Delivered[]) {
  return db
    .updateTable('notifications')
    .set({ status: 'delivered' })
    .where(
      'id',
      'in',
      done.map((item) => item.notificationId),
    );
}

/** Sets a delivery's status and its notification's together. */
export async function setDeliveryStatus(
  db: Executor,
  deliveryId: string,
  notificationId: string,
  status: 'pending' | 'delivered' | 'held' | 'failed' | 'expired',
  fields: {
    attempt?: AttemptRecord;
    nextAttemptAt?: number | null;
  } = {},
): Promise<void> {
  const attempt = fields.attempt;
  await db
    .updateTable('deliveries')
    .set((eb) => ({
      status,
      ...(attempt === undefined
        ? {}
        : {
            attempts: eb('attempts', '+', 1),
            last_attempt_at: attempt.at,
            last_status_code: attempt.statusCode,
            last_error: attempt.error,
            ...(status === 'delivered' ? { delivered_at: attempt.at + attempt.durationMs } : {}),
          }),
      ...(fields.nextAttemptAt === undefined ? {} : { next_attempt_at: fields.nextAttemptAt }),
    }))
    .where('id', '=', deliveryId)
    .execute();
  await db.updateTable('notifications').set({ status }).where('id', '=', notificationId).execute();
}

/** A success: the webhooks' failure counts and retry gates are cleared. */
function clearWebhookFailures(db: Executor, webhookIds: readonly string[]) {
  return db
    .updateTable('webhooks')
    .set({ consecutive_failures: 0, retry_at: null, probe_until: null })
    .where('id', 'in', webhookIds)
    .where((eb) => eb.or([eb('consecutive_failures', '>', 0), eb('probe_until', 'is not', null)]));
}

/**
 * Counts a failed request, unless a failure was counted after it started (requests in flight together
 * fail together: one failure, not eight). Returns the count and the retry time when it was counted.
 */
export async function countFailure(
  db: Executor,
  webhookId: string,
  startedAt: number,
  now: number,
  delayFor: (failures: number) => number,
): Promise<{ failures: number; retryAt: number } | undefined> {
  let query = db
    .selectFrom('webhooks')
    .select(['consecutive_failures', 'last_failure_at', 'retry_at'])
    .where('id', '=', webhookId);
  // Failures recorded by several workers at once are counted one after the other.
  if (isPostgres(db)) query = query.forUpdate();
  const webhook = await query.executeTakeFirst();
  if (webhook === undefined) return undefined;
  if (webhook.last_failure_at !== null && webhook.last_failure_at > startedAt) return undefined;
  const failures = webhook.consecutive_failures + 1;
  const retryAt = now + delayFor(failures);
  await db
    .updateTable('webhooks')
    .set({ consecutive_failures: failures, last_failure_at: now, retry_at: retryAt, probe_until: null })
    .where('id', '=', webhookId)
    .execute();
  return { failures, retryAt };
}

/**
 * Holds every pending delivery of a webhook that was disabled (their jobs then find nothing to do);
 * returns how many notifications that held.
 */
export async function holdPending(db: Executor, webhookId: string): Promise<number> {
  const pending = db
    .selectFrom('deliveries')
    .select('notification_id')
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending');
  const held = await db
    .updateTable('notifications')
    .set({ status: 'held' })
    .where('id', 'in', pending)
    .executeTakeFirst();
  await db
    .updateTable('deliveries')
    .set({ status: 'held', next_attempt_at: null })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .execute();
  return Number(held.numUpdatedRows);
}
