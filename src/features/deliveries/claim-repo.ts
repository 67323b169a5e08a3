import type { ExpressionBuilder, RawBuilder } from 'kysely';
import { isPostgres } from '../../db/connect.js';
import type { Database, Executor } from '../../db/types.js';
import { holdPending, notInFlight, resumeHeld, type DeliveryScope } from './repo.js';

/**
 * The claim: the one statement sequence that decides what is sent, in one short transaction. The webhooks
 * are locked first (PostgreSQL: FOR NO KEY UPDATE SKIP LOCKED; SQLite has one writer), so what is read
 * of their gate, slots and state holds until the leases are written. See docs/deliveries.md#the-dispatcher.
 */

/** A claimed delivery with what sending it needs. `attempts` is this run's fence. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  notification_id: string;
  webhook_id: string;
  /** The webhook's owner: a failure that may disable it locks the owner's row first. */
  user_id: string;
  /** The webhook's failures when claimed: a success after some clears them (the probe). */
  consecutive_failures: number;
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
  /** A test seam: awaited once the webhooks are locked, before anything is read of their deliveries. */
  afterLock?: () => Promise<void>;
}

export interface Claim {
  claimed: ClaimedDelivery[];
  /** Pending deliveries found at a disabled webhook, now held. */
  held: number;
  /** Held deliveries found at an enabled webhook, now due. */
  resumed: number;
}

/** Webhooks locked by one claim at most: a claim is one short transaction. */
const WEBHOOKS_PER_CLAIM = 50;

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
 * Leases up to `limit` sendable deliveries, never more per webhook than its free slots, none to a webhook
 * that is disabled or waiting for its retry time (unless its owner asked to retry that delivery now). On
 * the way it puts right what a producer racing a change of the webhook's state left: pending deliveries at
 * a disabled webhook are held, held ones at an enabled webhook are due. Runs in the caller's transaction.
 */
export async function claimDue(trx: Executor, options: ClaimOptions): Promise<Claim> {
  const { now } = options;
  const claim: Claim = { claimed: [], held: 0, resumed: 0 };
  const webhooks = await lockWebhooksToServe(trx, options);
  if (webhooks.length === 0) return claim;
  await options.afterLock?.();
  for (const webhook of webhooks.filter((w) => w.is_enabled !== 1)) {
    claim.held += await holdPending(trx, webhook.id);
  }
  const enabled = webhooks.filter((w) => w.is_enabled === 1);
  for (const webhook of enabled.filter((w) => w.holds))
    claim.resumed += await resumeHeld(trx, webhook.id, now);
  if (enabled.length === 0) return claim;
  const ids = enabled.map((webhook) => webhook.id);
  const inFlight = await countInFlight(trx, ids, now);
  const free = new Map(
    enabled.map((webhook) => [
      webhook.id,
      (webhook.consecutive_failures > 0 ? 1 : options.perWebhook) - (inFlight.get(webhook.id) ?? 0),
    ]),
  );
  const picked: string[] = [];
  for (const candidate of await sendableOf(trx, ids, options)) {
    if (picked.length === options.limit) break;
    const slots = free.get(candidate.webhook_id) ?? 0;
    if (slots <= 0) continue;
    free.set(candidate.webhook_id, slots - 1);
    picked.push(candidate.id);
  }
  if (picked.length > 0) claim.claimed = await lease(trx, picked, options);
  return claim;
}

/**
 * The webhooks a claim has work at, the longest-waiting first, locked: enabled ones with a sendable
 * delivery and, by a first count of their leases, a free slot (a filter only, so that webhooks whose slots
 * are all taken do not crowd out the others; the count that decides is made under the lock); enabled ones
 * holding deliveries; disabled ones with pending deliveries.
 */
async function lockWebhooksToServe(trx: Executor, options: Pick<ClaimOptions, 'now' | 'perWebhook'>) {
  const { now } = options;
  type WebhookScope = ExpressionBuilder<Database, 'webhooks'>;
  const oldestSendable = (eb: WebhookScope) =>
    eb
      .selectFrom('deliveries')
      .select((inner) => inner.fn.min('deliveries.next_attempt_at').as('due'))
      .whereRef('deliveries.webhook_id', '=', 'webhooks.id')
      .where((inner) => sendableNow(inner, now));
  const leased = (eb: WebhookScope) =>
    eb
      .selectFrom('deliveries as leased')
      .select((inner) => inner.fn.countAll().as('n'))
      .whereRef('leased.webhook_id', '=', 'webhooks.id')
      .where('leased.lease_until', '>', now);
  const slots = (eb: WebhookScope) =>
    eb.case().when('webhooks.consecutive_failures', '>', 0).then(1).else(options.perWebhook).end();
  const holding = (eb: WebhookScope) =>
    eb.exists(
      eb
        .selectFrom('deliveries')
        .select('deliveries.id')
        .whereRef('deliveries.webhook_id', '=', 'webhooks.id')
        .where('deliveries.status', '=', 'held')
        .where((inner) => notInFlight(inner, now)),
    );
  const pending = (eb: WebhookScope) =>
    eb.exists(
      eb
        .selectFrom('deliveries')
        .select('deliveries.id')
        .whereRef('deliveries.webhook_id', '=', 'webhooks.id')
        .where('deliveries.status', '=', 'pending'),
    );
  let query = trx
    .selectFrom('webhooks')
    .select(['id', 'is_enabled', 'consecutive_failures'])
    .select((eb) => holding(eb).as('holds'))
    .where((eb) =>
      eb.or([
        eb.and([
          eb('is_enabled', '=', 1),
          eb(oldestSendable(eb), 'is not', null),
          eb(leased(eb), '<', slots(eb)),
        ]),
        eb.and([eb('is_enabled', '=', 1), holding(eb)]),
        eb.and([eb('is_enabled', '=', 0), pending(eb)]),
      ]),
    )
    // Repairs first (they have nothing sendable yet), then the longest-waiting.
    .orderBy((eb) => eb.fn.coalesce(oldestSendable(eb), eb.val(0)))
    .orderBy('id')
    .limit(WEBHOOKS_PER_CLAIM);
  if (isPostgres(trx)) query = query.forNoKeyUpdate().skipLocked();
  const rows = await query.execute();
  return rows.map((row) => ({
    id: row.id,
    is_enabled: row.is_enabled,
    consecutive_failures: row.consecutive_failures,
    // PostgreSQL answers booleans, SQLite 0 or 1.
    holds: row.holds === true || Number(row.holds) === 1,
  }));
}

/**
 * Requests in flight per webhook: deliveries under a live lease, whatever their status now (one held by an
 * edit while its request is out still fills its slot). Read after the webhooks were locked, so on
 * PostgreSQL it sees every claim committed before.
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
 * The first sendable deliveries of each webhook, as many as it has slots at most: a retry the owner asked
 * for first, then the oldest due.
 */
async function sendableOf(trx: Executor, webhookIds: string[], options: ClaimOptions) {
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
    .where('deliveries.webhook_id', 'in', webhookIds)
    .where((eb) => sendableNow(eb, options.now));
  return trx
    .selectFrom(ranked.as('ranked'))
    .select(['id', 'webhook_id'])
    .where('place', '<=', options.perWebhook)
    .orderBy('retry_requested', 'desc')
    .orderBy('next_attempt_at')
    .orderBy('id')
    .execute();
}

/** Leases the picked deliveries (`attempts + 1` is each run's fence) and reads what sending them needs. */
async function lease(trx: Executor, picked: string[], options: ClaimOptions): Promise<ClaimedDelivery[]> {
  await trx
    .updateTable('deliveries')
    .set((eb) => ({
      lease_until: eb(options.now, '+', options.leaseMs),
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
      'webhooks.user_id',
      'webhooks.consecutive_failures',
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
    consecutive_failures: Number(row.consecutive_failures),
    occurred_at: Number(row.occurred_at),
    claimed_at: Number(row.claimed_at),
  }));
}
