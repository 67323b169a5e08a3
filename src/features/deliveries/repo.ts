import { sql, type ExpressionBuilder, type RawBuilder } from 'kysely';
import { isPostgres } from '../../db/connect.js';
import { nowExpression, type PreparedNow } from '../../db/now.js';
import { CHUNK, inChunks } from '../../db/chunks.js';
import { allColumns, Prepared, rowsSlots, slot, slots } from '../../db/prepared.js';
import type { Database, DeliveryStatus, Executor } from '../../db/types.js';

/**
 * The delivery queue's SQL beside the claim (claim-repo.ts): a run's fenced writes, the webhook's gate and
 * lock, holding and sending again, and what the sweep looks for. See docs/deliveries.md.
 */

export type DeliveryScope = ExpressionBuilder<Database, 'deliveries' | 'webhooks'>;

/** One request made for a delivery, as the log keeps it. */
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

/**
 * What fences a run's writes: the lease its claim took (or its renewal), which no other claim can take
 * while it is live and every later claim moves forward, and which must not have run out. A run writes its
 * outcome once, and never after a newer claim, its lease given back, or its lease's end, whether or not
 * another run has taken the delivery since.
 */
export interface RunFence {
  id: string;
  /** The run's lease end, as the claim (or the renewal) stored it. */
  lease_until: number;
}

/** Whether a run still holds its delivery's live lease; the row is locked with it on PostgreSQL. */
export async function holdsClaim(trx: Executor, run: RunFence, now: RawBuilder<number>): Promise<boolean> {
  let query = trx
    .selectFrom('deliveries')
    .select('id')
    .where('id', '=', run.id)
    .where('lease_until', '=', run.lease_until)
    .where('lease_until', '>', now);
  if (isPostgres(trx)) query = query.forUpdate();
  return (await query.executeTakeFirst()) !== undefined;
}

/**
 * Ends a run's lease, fenced by its claim; returns the delivery's notification and status when this run
 * still holds the latest claim, undefined when it does not (a newer run took it over, or the delivery was
 * removed with its webhook): then the run records nothing.
 */
export async function endLease(
  trx: Executor,
  run: RunFence,
  now: RawBuilder<number>,
  changes: {
    status?: DeliveryStatus;
    nextAttemptAt?: number | RawBuilder<number> | null;
    attempt: AttemptRecord;
  },
): Promise<{ notification_id: string; status: DeliveryStatus } | undefined> {
  const { attempt } = changes;
  const delivered = changes.status === 'delivered';
  return trx
    .updateTable('deliveries')
    .set((eb) => ({
      lease_until: null,
      attempts: eb('attempts', '+', 1),
      // A retry asked for while this run's request was out: this run was it.
      retry_requested: 0,
      last_attempt_at: attempt.at,
      last_status_code: attempt.statusCode,
      last_error: attempt.error,
      ...(changes.status === undefined ? {} : { status: changes.status }),
      ...(changes.nextAttemptAt === undefined ? {} : { next_attempt_at: changes.nextAttemptAt }),
      ...(delivered
        ? {
            delivered_at: attempt.at + attempt.durationMs,
            next_attempt_at: null,
            success_duration_ms: attempt.durationMs,
            success_response: attempt.response,
          }
        : {}),
    }))
    .where('id', '=', run.id)
    .where('lease_until', '=', run.lease_until)
    .where('lease_until', '>', now)
    .returning(['notification_id', 'status'])
    .executeTakeFirst();
}

type DeliveredShape = { count: number; byDatabase: boolean };
type Delivered = { id: string; notification_id: string };

/**
 * Ends the leases of runs whose requests were answered 2xx, each fenced by its own claim, in one statement
 * (the same SQL on both databases: a VALUES list named by position, its values cast), the request kept on
 * the row; returns the delivery and notification of each run that still held its claim. The others are left
 * as they are.
 */
export async function endLeasesDelivered(
  trx: Executor,
  runs: readonly (RunFence & { attempt: AttemptRecord })[],
  now: PreparedNow,
): Promise<Delivered[]> {
  if (runs.length === 0) return [];
  const rows = runs.map(({ id, lease_until, attempt }) => ({
    id,
    leaseUntil: lease_until,
    at: attempt.at,
    statusCode: attempt.statusCode,
    deliveredAt: attempt.at + attempt.durationMs,
    durationMs: attempt.durationMs,
    response: attempt.response,
  }));
  return END_LEASES_DELIVERED.execute(
    trx,
    { count: runs.length, byDatabase: now.byDatabase },
    { rows, now: now.now },
  );
}

/** Compiled once per number of runs. */
const END_LEASES_DELIVERED = new Prepared((_trx: Executor, shape: DeliveredShape) => {
  const bigint = (index: number, column: string) => sql`cast(${slot('rows', index, column)} as bigint)`;
  const values = sql.join(
    Array.from(
      { length: shape.count },
      (_, k) =>
        sql`(${slot('rows', k, 'id')}, ${bigint(k, 'leaseUntil')}, ${bigint(k, 'at')}, ${bigint(k, 'statusCode')},
          ${bigint(k, 'deliveredAt')}, ${bigint(k, 'durationMs')}, cast(${slot('rows', k, 'response')} as text))`,
    ),
  );
  return sql<Delivered>`
    update deliveries set status = 'delivered', lease_until = null, retry_requested = 0,
      attempts = deliveries.attempts + 1, next_attempt_at = null, last_error = null,
      last_attempt_at = v.column3, last_status_code = v.column4, delivered_at = v.column5,
      success_duration_ms = v.column6, success_response = v.column7
    from (values ${values}) as v
    where deliveries.id = v.column1 and deliveries.lease_until = v.column2
      and deliveries.lease_until > ${nowExpression(shape.byDatabase)}
    returning deliveries.id, deliveries.notification_id`;
});

export async function insertAttempts(db: Executor, attempts: readonly AttemptRecord[]): Promise<void> {
  if (attempts.length > 0) await INSERT_ATTEMPTS.execute(db, { count: attempts.length }, { attempts });
}

const ATTEMPT_FIELDS = allColumns<AttemptRecord>({
  id: true,
  deliveryId: true,
  at: true,
  durationMs: true,
  statusCode: true,
  failure: true,
  error: true,
  response: true,
});

/** Compiled once per number of attempts: every outcome writes its attempts in one statement. */
const INSERT_ATTEMPTS = new Prepared((db: Executor, shape: { count: number }) =>
  db.insertInto('delivery_attempts').values(
    rowsSlots<AttemptRecord>('attempts', ATTEMPT_FIELDS, shape.count).map((attempt) => ({
      id: attempt.id,
      delivery_id: attempt.deliveryId,
      at: attempt.at,
      duration_ms: attempt.durationMs,
      status_code: attempt.statusCode,
      failure: attempt.failure,
      error: attempt.error,
      response: attempt.response,
    })),
  ),
);

export async function setNotificationsStatus(
  db: Executor,
  notificationIds: readonly string[],
  status: DeliveryStatus,
): Promise<void> {
  for (let start = 0; start < notificationIds.length; start += CHUNK) {
    const ids = notificationIds.slice(start, start + CHUNK);
    await SET_NOTIFICATIONS_STATUS.execute(db, { count: ids.length }, { status, ids });
  }
}

export async function setNotificationStatus(
  db: Executor,
  notificationId: string,
  status: DeliveryStatus,
): Promise<void> {
  await setNotificationsStatus(db, [notificationId], status);
}

/**
 * A webhook or channel being deleted: what it had not sent yet goes with it, and each such notification ends
 * `cancelled` (reason `webhook_deleted`), in the order of every other lock: deliveries, then notifications.
 * The caller holds the webhook's lock. Returns how many notifications were cancelled.
 */
export async function cancelUnsent(trx: Executor, webhookId: string): Promise<number> {
  const removed = await trx
    .deleteFrom('deliveries')
    .where('webhook_id', '=', webhookId)
    .where('status', 'in', ['pending', 'held'])
    .returning('notification_id')
    .execute();
  return inChunks(
    removed.map((row) => row.notification_id),
    (ids) => cancelNotifications(trx, ids),
  );
}

/** Notifications that will never go out because their endpoint was deleted: `cancelled`, `webhook_deleted`. */
export async function cancelNotifications(trx: Executor, ids: readonly string[]): Promise<number> {
  const result = await trx
    .updateTable('notifications')
    .set({ status: 'cancelled', reason: 'webhook_deleted' })
    .where('id', 'in', ids)
    .where('status', 'in', ['pending', 'held'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Compiled once per number of notifications: every outcome and every held delivery sets some. */
const SET_NOTIFICATIONS_STATUS = new Prepared((db: Executor, shape: { count: number }) =>
  db
    .updateTable('notifications')
    .set({ status: slot<DeliveryStatus>('status') })
    .where('id', 'in', slots<string>('ids', shape.count)),
);

/** A delivery to be made, before its webhook decides its status. */
export interface NewDelivery {
  id: string;
  notificationId: string;
  webhookId: string;
  createdAt: number;
  traceparent: string | null;
}

/**
 * Makes a delivery as its webhook is now, in one statement that reads the webhook with the lock its foreign
 * key takes anyway (PostgreSQL: FOR KEY SHARE): pending and due at `now` when the webhook is enabled, held
 * when not. Only a delete waits for that lock or holds it off, and a webhook deleted before the statement
 * ran gives no row: then nothing is made and undefined is returned. A change of the webhook's state racing
 * this transaction is put right by the next claim (docs/deliveries.md#locks).
 */
export async function insertDelivery(
  trx: Executor,
  delivery: NewDelivery,
  { byDatabase, now }: PreparedNow,
): Promise<'pending' | 'held' | undefined> {
  const [row] = await INSERT_DELIVERY.execute(trx, { byDatabase }, { ...delivery, now });
  return row?.status as 'pending' | 'held' | undefined;
}

/** The statement of `insertDelivery`, built and compiled once per shape: it runs for every notification. */
const INSERT_DELIVERY = new Prepared((trx: Executor, shape: { byDatabase: boolean }) => {
  const now = nowExpression(shape.byDatabase);
  return trx
    .insertInto('deliveries')
    .columns([
      'id',
      'notification_id',
      'webhook_id',
      'status',
      'attempts',
      'next_attempt_at',
      'created_at',
      'traceparent',
    ])
    .expression((eb) => {
      // The webhook read (and locked) once.
      let webhook = eb
        .selectFrom('webhooks')
        .select(['webhooks.id', 'webhooks.is_enabled'])
        .where('webhooks.id', '=', slot<string>('webhookId'));
      if (isPostgres(trx)) webhook = webhook.forKeyShare();
      return eb.selectFrom(webhook.as('w')).select((outer) => {
        const isEnabled = outer('w.is_enabled', '=', 1);
        return [
          sql<string>`cast(${slot('id')} as text)`.as('id'),
          sql<string>`cast(${slot('notificationId')} as text)`.as('notification_id'),
          'w.id as webhook_id',
          outer.case().when(isEnabled).then(sql.lit('pending')).else(sql.lit('held')).end().as('status'),
          sql.lit(0).as('attempts'),
          outer.case().when(isEnabled).then(now).else(sql.lit(null)).end().as('next_attempt_at'),
          sql<number>`cast(${slot('createdAt')} as bigint)`.as('created_at'),
          sql<string | null>`cast(${slot('traceparent')} as text)`.as('traceparent'),
        ];
      });
    })
    .returning(['status']);
});

/**
 * Whether a webhook is enabled now, read with the lock its deliveries' foreign key takes (PostgreSQL: FOR
 * KEY SHARE, which only a delete waits for): a disable racing the reader is put right by the next claim.
 */
export async function readWebhookForDelivery(
  trx: Executor,
  webhookId: string,
): Promise<{ is_enabled: number } | undefined> {
  let query = trx.selectFrom('webhooks').select('is_enabled').where('id', '=', webhookId);
  if (isPostgres(trx)) query = query.forKeyShare();
  return query.executeTakeFirst();
}

/**
 * A webhook locked before its gate or its state changes (PostgreSQL: FOR NO KEY UPDATE): a failure's
 * outcome, a probe's success, the sweep, an edit, a verify. Claims skip it until the caller commits; the
 * producers of its deliveries are not held up. Callers that may also touch its owner's row lock that first.
 */
export async function lockWebhook(trx: Executor, webhookId: string) {
  let query = trx
    .selectFrom('webhooks')
    .select([
      'id',
      'kind',
      'user_id',
      'name',
      'url',
      'is_enabled',
      'consecutive_failures',
      'last_failure_at',
      'retry_at',
      'updated_at',
    ])
    .where('id', '=', webhookId);
  if (isPostgres(trx)) query = query.forNoKeyUpdate();
  return query.executeTakeFirst();
}

export type LockedWebhook = NonNullable<Awaited<ReturnType<typeof lockWebhook>>>;

/** A success resumes the webhook: its failure count and retry gate are cleared. */
export async function clearFailures(trx: Executor, webhookId: string): Promise<void> {
  await trx
    .updateTable('webhooks')
    .set({ consecutive_failures: 0, retry_at: null })
    .where('id', '=', webhookId)
    .where('consecutive_failures', '>', 0)
    .execute();
}

/**
 * Every pending delivery of the webhook waiting for a later time, not in flight, due now instead (a probe
 * succeeded: the endpoint answers again). The claim then takes them oldest first. Returns how many moved.
 */
export async function makeWaitingDue(
  trx: Executor,
  webhookId: string,
  now: RawBuilder<number>,
): Promise<number> {
  const moved = await trx
    .updateTable('deliveries')
    .set({ next_attempt_at: now })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .where('lease_until', 'is', null)
    .where('next_attempt_at', '>', now)
    .executeTakeFirst();
  return Number(moved.numUpdatedRows);
}

/** A counted failure, at the database's now: the count, and the time before which nothing more is sent. */
export async function countFailure(
  trx: Executor,
  webhookId: string,
  failures: number,
  now: RawBuilder<number>,
  delayMs: number,
): Promise<number> {
  const row = await trx
    .updateTable('webhooks')
    .set((eb) => ({ consecutive_failures: failures, last_failure_at: now, retry_at: eb(now, '+', delayMs) }))
    .where('id', '=', webhookId)
    .returning('retry_at')
    .executeTakeFirstOrThrow();
  return Number(row.retry_at);
}

/**
 * Holds every pending delivery of a webhook that was disabled, in the transaction that disabled it, with
 * their notifications; returns how many. One in flight keeps its lease: its run still records the answer.
 */
export async function holdPending(db: Executor, webhookId: string): Promise<number> {
  // Deliveries first, then their notifications, as every writer does (docs/deliveries.md#locks): an outcome
  // committed meanwhile is seen here, and what it delivered is neither held nor its notification.
  const held = await db
    .updateTable('deliveries')
    .set({ status: 'held', next_attempt_at: null, retry_requested: 0 })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .returning('notification_id')
    .execute();
  return inChunks(
    held.map((row) => row.notification_id),
    async (ids) =>
      Number(
        (
          await db
            .updateTable('notifications')
            .set({ status: 'held' })
            .where('id', 'in', ids)
            .executeTakeFirst()
        ).numUpdatedRows,
      ),
  );
}

/**
 * Held deliveries of an enabled webhook that are not in flight, due now with their notifications pending,
 * in the caller's transaction (which holds the webhook's lock); returns how many.
 */
export async function resumeHeld(db: Executor, webhookId: string, now: RawBuilder<number>): Promise<number> {
  const resumed = await db
    .updateTable('deliveries')
    .set({ status: 'pending', next_attempt_at: now })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'held')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .returning('notification_id')
    .execute();
  for (let start = 0; start < resumed.length; start += CHUNK) {
    const chunk = resumed.slice(start, start + CHUNK).map((row) => row.notification_id);
    await db.updateTable('notifications').set({ status: 'pending' }).where('id', 'in', chunk).execute();
  }
  return resumed.length;
}

/**
 * Deliveries due again from `now`, with their notifications pending; only those still in a status of
 * `from` (read by the caller before its transaction, so a change meanwhile wins). Returns how many.
 */
/**
 * A delivery sent again keeps its last success in the attempt log from now on: the columns that held it on
 * the row are emptied into a row of `delivery_attempts` (whose id is the delivery's and the request's time).
 * Only for rows the caller's statement just changed, and so holds locked.
 */
async function logKeptSuccesses(db: Executor, deliveryIds: readonly string[]): Promise<void> {
  await db
    .insertInto('delivery_attempts')
    .columns(['id', 'delivery_id', 'at', 'duration_ms', 'status_code', 'failure', 'error', 'response'])
    .expression((eb) =>
      eb
        .selectFrom('deliveries')
        .select((inner) => [
          sql<string>`${inner.ref('id')} || '-' || cast(${inner.ref('last_attempt_at')} as text)`.as('id'),
          'id as delivery_id',
          inner.fn.coalesce('last_attempt_at', inner.lit(0)).as('at'),
          inner.fn.coalesce('success_duration_ms', inner.lit(0)).as('duration_ms'),
          'last_status_code',
          sql<null>`null`.as('failure'),
          sql<null>`null`.as('error'),
          'success_response',
        ])
        .where('id', 'in', deliveryIds)
        .where('success_duration_ms', 'is not', null),
    )
    .execute();
  await db
    .updateTable('deliveries')
    .set({ success_duration_ms: null, success_response: null })
    .where('id', 'in', deliveryIds)
    .execute();
}

export async function makePending(
  db: Executor,
  deliveries: readonly { id: string; notification_id: string }[],
  from: readonly DeliveryStatus[],
  now: RawBuilder<number>,
  options: { retryRequested?: boolean } = {},
): Promise<number> {
  let changed = 0;
  for (let start = 0; start < deliveries.length; start += CHUNK) {
    const chunk = deliveries.slice(start, start + CHUNK);
    const moved = await db
      .updateTable('deliveries')
      .set({ status: 'pending', next_attempt_at: now, retry_requested: options.retryRequested ? 1 : 0 })
      .where(
        'id',
        'in',
        chunk.map((delivery) => delivery.id),
      )
      .where('status', 'in', from)
      .returning(['id', 'notification_id'])
      .execute();
    if (moved.length === 0) continue;
    changed += moved.length;
    await logKeptSuccesses(
      db,
      moved.map((row) => row.id),
    );
    await db
      .updateTable('notifications')
      .set({ status: 'pending' })
      .where(
        'id',
        'in',
        moved.map((row) => row.notification_id),
      )
      .execute();
  }
  return changed;
}

/**
 * Gives unfinished runs back (at shutdown): their deliveries are due again at once. A lease given back
 * fences its run out, so it can never write over the run that claims the delivery next.
 */
export async function releaseLeases(db: Executor, runs: readonly RunFence[]): Promise<void> {
  if (runs.length === 0) return;
  await db
    .updateTable('deliveries')
    .set({ lease_until: null })
    .where((eb) =>
      eb.or(runs.map((run) => eb.and([eb('id', '=', run.id), eb('lease_until', '=', run.lease_until)]))),
    )
    .execute();
}

/**
 * A run about to send, long after its claim (a stall): its lease starts again from now, only while it is
 * still live and this run's. Returns the new lease end, the run's fence from then on; undefined when it ran
 * out or was taken: then the run must not send.
 */
export async function renewLease(
  db: Executor,
  run: RunFence,
  now: RawBuilder<number>,
  leaseMs: number,
): Promise<number | undefined> {
  const renewed = await db
    .updateTable('deliveries')
    .set((eb) => ({ lease_until: eb(now, '+', leaseMs) }))
    .where('id', '=', run.id)
    .where('lease_until', '=', run.lease_until)
    .where('lease_until', '>', now)
    .returning('lease_until')
    .executeTakeFirst();
  return renewed?.lease_until == null ? undefined : Number(renewed.lease_until);
}

/** A delivery under no live lease: no request for it is in flight. */
export function notInFlight(eb: ExpressionBuilder<Database, 'deliveries'>, now: RawBuilder<number>) {
  return eb.or([eb('deliveries.lease_until', 'is', null), eb('deliveries.lease_until', '<=', now)]);
}

/**
 * Deliveries with no way forward, none in flight: pending with no due time; pending at a disabled webhook
 * (whose disabling should have held them); held at an enabled one (whose verify should have sent them).
 */
function strandedQuery(db: Executor, now: RawBuilder<number>) {
  return db
    .selectFrom('deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .where((eb) => notInFlight(eb, now))
    .where((eb) =>
      eb.or([
        eb.and([
          eb('deliveries.status', '=', 'pending'),
          eb.or([eb('deliveries.next_attempt_at', 'is', null), eb('webhooks.is_enabled', '=', 0)]),
        ]),
        eb.and([eb('deliveries.status', '=', 'held'), eb('webhooks.is_enabled', '=', 1)]),
      ]),
    );
}

/** The webhooks that have a delivery with no way forward (read without locks: the sweep checks again). */
export async function webhooksWithStranded(db: Executor, now: RawBuilder<number>): Promise<string[]> {
  const rows = await strandedQuery(db, now).select('deliveries.webhook_id').distinct().execute();
  return rows.map((row) => row.webhook_id);
}

/** A webhook's deliveries with no way forward, as they are now that the caller has locked the webhook. */
export async function strandedOf(db: Executor, webhookId: string, now: RawBuilder<number>) {
  return strandedQuery(db, now)
    .select([
      'deliveries.id',
      'deliveries.notification_id',
      'deliveries.status',
      'deliveries.created_at',
      'webhooks.is_enabled',
    ])
    .where('deliveries.webhook_id', '=', webhookId)
    .orderBy('deliveries.created_at')
    .orderBy('deliveries.id')
    .execute();
}
