import type { ExpressionBuilder, RawBuilder } from 'kysely';
import { isPostgres } from '../../db/connect.js';
import type { Database, DeliveryStatus, Executor } from '../../db/types.js';

/**
 * The delivery queue's SQL. A pending delivery is due once `next_attempt_at` has come; a claim leases it
 * (`lease_until`) and counts the claim in `attempts`, which then fences every write of that run. The
 * webhook's gate and slots are read in the claim's own transaction, under a lock of the webhook's row on
 * PostgreSQL (SQLite has one writer), so two claims can never fill the same slot.
 * See docs/deliveries.md.
 */

/** A claimed delivery with what sending it needs. `attempts` is this run's fence. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  notification_id: string;
  webhook_id: string;
  /** When the claim was made, on the clock the leases use: a failure counted after it is the same burst. */
  claimed_at: number;
  payload: string;
  occurred_at: number;
  url: string;
  headers: string;
  secret_sealed: string;
}

export interface ClaimOptions {
  now: RawBuilder<number>;
  leaseMs: number;
  /** Deliveries claimed at most (the dispatcher's free slots). */
  limit: number;
  /** Requests in flight per webhook at most, across every process; 1 while the webhook is failing. */
  perWebhook: number;
  /** A test seam: awaited once the ready webhooks are locked, before their slots are counted. */
  afterLock?: () => Promise<void>;
}

/** Webhooks ready to be sent to at most this many at once: a claim is one short transaction. */
const WEBHOOKS_PER_CLAIM = 50;

type DeliveryScope = ExpressionBuilder<Database, 'deliveries' | 'webhooks'>;

/**
 * A delivery that may be sent now: pending, due, not in flight, and either past its webhook's retry time
 * or one whose retry its owner asked for.
 */
function sendableNow(eb: DeliveryScope, now: RawBuilder<number>) {
  return eb.and([
    eb('deliveries.status', '=', 'pending'),
    eb('deliveries.next_attempt_at', '<=', now),
    notInFlight(eb, now),
    eb.or([
      eb('webhooks.retry_at', 'is', null),
      eb('webhooks.retry_at', '<=', now),
      eb('deliveries.retry_requested', '=', 1),
    ]),
  ]);
}

/**
 * Leases up to `limit` due deliveries, never more per webhook than its free slots, and none to a webhook
 * that is disabled or waiting for its retry time (unless its owner asked to retry that delivery now).
 * Runs in the caller's transaction.
 */
export async function claimDue(trx: Executor, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const { now } = options;
  const webhooks = await lockReadyWebhooks(trx, options);
  if (webhooks.length === 0) return [];
  await options.afterLock?.();
  const inFlight = await countInFlight(
    trx,
    webhooks.map((webhook) => webhook.id),
    now,
  );
  const candidates = await dueDeliveries(trx, webhooks, options);
  const free = new Map(
    webhooks.map((webhook) => [
      webhook.id,
      (webhook.consecutive_failures > 0 ? 1 : options.perWebhook) - (inFlight.get(webhook.id) ?? 0),
    ]),
  );
  const picked: string[] = [];
  for (const candidate of candidates) {
    if (picked.length === options.limit) break;
    const slots = free.get(candidate.webhook_id) ?? 0;
    if (slots <= 0) continue;
    free.set(candidate.webhook_id, slots - 1);
    picked.push(candidate.id);
  }
  if (picked.length === 0) return [];
  await trx
    .updateTable('deliveries')
    .set((eb) => ({
      lease_until: eb(now, '+', options.leaseMs),
      attempts: eb('attempts', '+', 1),
      retry_requested: 0,
    }))
    .where('id', 'in', picked)
    .execute();
  const claimed = await trx
    .selectFrom('deliveries')
    .innerJoin('notifications', 'notifications.id', 'deliveries.notification_id')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .select([
      'deliveries.id',
      'deliveries.attempts',
      'deliveries.notification_id',
      'deliveries.webhook_id',
      'notifications.payload',
      'notifications.occurred_at',
      'webhooks.url',
      'webhooks.headers',
      'webhooks.secret_sealed',
    ])
    .select((eb) => eb(eb.ref('deliveries.lease_until'), '-', options.leaseMs).as('claimed_at'))
    .where('deliveries.id', 'in', picked)
    .orderBy('deliveries.next_attempt_at')
    .orderBy('deliveries.id')
    .execute();
  return claimed.map((row) => ({
    ...row,
    attempts: Number(row.attempts),
    occurred_at: Number(row.occurred_at),
    claimed_at: Number(row.claimed_at),
  }));
}

/**
 * The webhooks with something to send now and a slot free for it, the longest-waiting first, locked
 * (PostgreSQL: FOR NO KEY UPDATE, skipping those another claim, a failure's outcome or a change of their
 * state holds: the next claim sees them). The slots read
 * here are a filter only, so that webhooks whose slots are all taken do not crowd out the others; the
 * count that decides is made after the lock.
 */
async function lockReadyWebhooks(trx: Executor, options: Pick<ClaimOptions, 'now' | 'perWebhook'>) {
  const { now } = options;
  const oldestSendable = (eb: ExpressionBuilder<Database, 'webhooks'>) =>
    eb
      .selectFrom('deliveries')
      .select((inner) => inner.fn.min('deliveries.next_attempt_at').as('due'))
      .whereRef('deliveries.webhook_id', '=', 'webhooks.id')
      .where((inner) => sendableNow(inner, now));
  const leased = (eb: ExpressionBuilder<Database, 'webhooks'>) =>
    eb
      .selectFrom('deliveries as leased')
      .select((inner) => inner.fn.countAll().as('n'))
      .whereRef('leased.webhook_id', '=', 'webhooks.id')
      .where('leased.lease_until', '>', now);
  const slots = (eb: ExpressionBuilder<Database, 'webhooks'>) =>
    eb.case().when('webhooks.consecutive_failures', '>', 0).then(1).else(options.perWebhook).end();
  let query = trx
    .selectFrom('webhooks')
    .select(['id', 'consecutive_failures', 'retry_at'])
    .where('is_enabled', '=', 1)
    .where((eb) => eb(oldestSendable(eb), 'is not', null))
    .where((eb) => eb(leased(eb), '<', slots(eb)))
    .orderBy((eb) => oldestSendable(eb))
    .orderBy('id')
    .limit(WEBHOOKS_PER_CLAIM);
  if (isPostgres(trx)) query = query.forNoKeyUpdate().skipLocked();
  const rows = await query.execute();
  return rows.map((row) => ({
    id: row.id,
    consecutive_failures: row.consecutive_failures,
    retry_at: row.retry_at === null ? null : Number(row.retry_at),
  }));
}

/**
 * Requests in flight per webhook: deliveries under a live lease, whatever their status now (one held by an
 * edit while its request is out still fills its slot). A statement of its own, after the webhooks were
 * locked, so on PostgreSQL it sees every claim committed before.
 */
async function countInFlight(trx: Executor, webhookIds: string[], now: RawBuilder<number>) {
  const rows = await trx
    .selectFrom('deliveries')
    .select(['webhook_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('webhook_id', 'in', webhookIds)
    .where('lease_until', '>', now)
    .groupBy('webhook_id')
    .execute();
  return new Map(rows.map((row) => [row.webhook_id, Number(row.n)]));
}

/**
 * The first sendable deliveries of each locked webhook, as many as it has slots at most: a retry the owner
 * asked for first, then the oldest due.
 */
async function dueDeliveries(trx: Executor, webhooks: { id: string }[], options: ClaimOptions) {
  const { now } = options;
  const ranked = trx
    .selectFrom('deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .select([
      'deliveries.id',
      'deliveries.webhook_id',
      'deliveries.retry_requested',
      'deliveries.next_attempt_at',
    ])
    .select((eb) =>
      eb.fn
        .agg<number>('row_number')
        .over((over) =>
          over
            .partitionBy('deliveries.webhook_id')
            .orderBy('deliveries.retry_requested', 'desc')
            .orderBy('deliveries.next_attempt_at')
            .orderBy('deliveries.id'),
        )
        .as('place'),
    )
    .where(
      'deliveries.webhook_id',
      'in',
      webhooks.map((webhook) => webhook.id),
    )
    .where((eb) => sendableNow(eb, now));
  return trx
    .selectFrom(ranked.as('ranked'))
    .select(['id', 'webhook_id'])
    .where('place', '<=', options.perWebhook)
    .orderBy('retry_requested', 'desc')
    .orderBy('next_attempt_at')
    .orderBy('id')
    .execute();
}

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
 * What fences a run's writes: the claim it made (`attempts` counts claims and never goes back) and a lease
 * not given up. A run writes its outcome once, and never after a newer claim or its lease given back.
 */
export interface RunFence {
  id: string;
  attempts: number;
}

/** Whether a run still holds its delivery's latest claim; the row is locked with it on PostgreSQL. */
export async function holdsClaim(trx: Executor, run: RunFence): Promise<boolean> {
  let query = trx
    .selectFrom('deliveries')
    .select('id')
    .where('id', '=', run.id)
    .where('attempts', '=', run.attempts)
    .where('lease_until', 'is not', null);
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
    .set({
      lease_until: null,
      // A retry asked for while this run's request was out: this run was it.
      retry_requested: 0,
      last_attempt_at: attempt.at,
      last_status_code: attempt.statusCode,
      last_error: attempt.error,
      ...(changes.status === undefined ? {} : { status: changes.status }),
      ...(changes.nextAttemptAt === undefined ? {} : { next_attempt_at: changes.nextAttemptAt }),
      ...(delivered ? { delivered_at: attempt.at + attempt.durationMs, next_attempt_at: null } : {}),
    })
    .where('id', '=', run.id)
    .where('attempts', '=', run.attempts)
    .where('lease_until', 'is not', null)
    .returning(['notification_id', 'status'])
    .executeTakeFirst();
}

export async function insertAttempt(db: Executor, attempt: AttemptRecord): Promise<void> {
  await db
    .insertInto('delivery_attempts')
    .values({
      id: attempt.id,
      delivery_id: attempt.deliveryId,
      at: attempt.at,
      duration_ms: attempt.durationMs,
      status_code: attempt.statusCode,
      failure: attempt.failure,
      error: attempt.error,
      response: attempt.response,
    })
    .execute();
}

export async function setNotificationStatus(
  db: Executor,
  notificationId: string,
  status: DeliveryStatus,
): Promise<void> {
  await db.updateTable('notifications').set({ status }).where('id', '=', notificationId).execute();
}

/**
 * Whether a webhook is enabled, as a producer of its deliveries reads it (PostgreSQL: FOR KEY SHARE). That
 * lock waits for, and holds off, only what takes the row FOR UPDATE: every change of whether the webhook
 * is enabled (`lockWebhook`). Claims (FOR NO KEY UPDATE) pass it, so producers never hide a webhook from
 * the dispatcher. SQLite's single writer gives the same. See docs/deliveries.md#locks.
 */
export async function readWebhookEnabled(trx: Executor, webhookId: string): Promise<boolean> {
  let query = trx.selectFrom('webhooks').select('is_enabled').where('id', '=', webhookId);
  if (isPostgres(trx)) query = query.forKeyShare();
  const row = await query.executeTakeFirst();
  return row?.is_enabled === 1;
}

/**
 * A webhook locked before whether it is enabled may change (PostgreSQL: FOR UPDATE, which waits for the
 * producers reading it and for a claim under way): a failure that may disable it, the sweep, an edit, a
 * verify. Until the caller commits, no claim takes its deliveries and no producer reads it.
 */
export async function lockWebhook(trx: Executor, webhookId: string) {
  let query = trx
    .selectFrom('webhooks')
    .select([
      'id',
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
  if (isPostgres(trx)) query = query.forUpdate();
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
    .set({ status: 'held', next_attempt_at: null, retry_requested: 0 })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .execute();
  return Number(held.numUpdatedRows);
}

/** Statements touch at most this many deliveries (SQLite's limit on bound values stays far away). */
const CHUNK = 500;

/**
 * Deliveries due again from `now`, with their notifications pending; only those still in a status of
 * `from` (read by the caller before its transaction, so a change meanwhile wins). Returns how many.
 */
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
      .returning('notification_id')
      .execute();
    if (moved.length === 0) continue;
    changed += moved.length;
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
 * Gives unfinished runs back (at shutdown): their deliveries are due again at once. The claims still
 * count, so a run given back can never write over the run that claims the delivery next.
 */
export async function releaseLeases(db: Executor, runs: readonly RunFence[]): Promise<void> {
  if (runs.length === 0) return;
  await db
    .updateTable('deliveries')
    .set({ lease_until: null })
    .where((eb) =>
      eb.or(runs.map((run) => eb.and([eb('id', '=', run.id), eb('attempts', '=', run.attempts)]))),
    )
    .execute();
}

/** A delivery under no live lease: no request for it is in flight. */
function notInFlight(eb: DeliveryScope, now: RawBuilder<number>) {
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
