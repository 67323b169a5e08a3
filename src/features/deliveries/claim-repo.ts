import { sql, type ExpressionBuilder, type RawBuilder } from 'kysely';
import { isPostgres } from '../../db/connect.js';
import { nowExpression, nowValue, preparedNow, type PreparedNow } from '../../db/now.js';
import { Prepared, slot, slots } from '../../db/prepared.js';
import type { Clock } from '../../lib/clock.js';
import type { Database, EndpointKind, Executor } from '../../db/types.js';
import { holdPending, notInFlight, resumeHeld, type DeliveryScope } from './repo.js';

/**
 * The claim: the one statement sequence that decides what is sent, in one short transaction. The webhooks
 * are locked first (PostgreSQL: FOR NO KEY UPDATE SKIP LOCKED; SQLite has one writer), so what is read
 * of their gate, slots and state holds until the leases are written. See docs/deliveries.md#the-dispatcher.
 */

/** A claimed delivery with what sending it needs. `lease_until` is this run's fence. */
export interface ClaimedDelivery {
  id: string;
  /** The requests recorded for it before this run's. */
  attempts: number;
  /** This run's lease end, as stored: it fences the run's writes (repo.ts RunFence). */
  lease_until: number;
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
  /** A webhook, or a channel (features/channels): what is sent, and where, follows from it. */
  kind: EndpointKind;
  url: string;
  headers: string;
  secret_sealed: string;
  /** A rotation's previous secret: it signs beside the current one until it expires. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: number | null;
  /** The trace each request for it is a span of; null without tracing. */
  traceparent: string | null;
}

export interface ClaimOptions {
  /** The process's clock: on PostgreSQL, unless a test sets its own, leases use the database's instead. */
  clock: Clock;
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

/** A pending delivery due now and not in flight (its webhook's gate aside). */
function dueNow(eb: ExpressionBuilder<Database, 'deliveries'>, now: RawBuilder<number>) {
  return eb.and([
    eb('deliveries.status', '=', sql.lit('pending')),
    eb('deliveries.next_attempt_at', '<=', now),
    notInFlight(eb, now),
  ]);
}

/** One whose owner asked to send it now: it passes a closed gate. A literal, so the partial index serves. */
const asked = (eb: DeliveryScope) => eb('deliveries.retry_requested', '=', sql.lit(1));

/**
 * Leases up to `limit` sendable deliveries, never more per webhook than its free slots, none to a webhook
 * that is disabled or waiting for its retry time (unless its owner asked to retry that delivery now). On
 * the way it puts right what a producer racing a change of the webhook's state left: pending deliveries at
 * a disabled webhook are held, held ones at an enabled webhook are due. Runs in the caller's transaction.
 */
export async function claimDue(trx: Executor, options: ClaimOptions): Promise<Claim> {
  // One reading of the clock for the whole claim.
  const at = preparedNow(trx, options.clock);
  const now = nowValue(at);
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
  const inFlight = await countInFlight(
    trx,
    enabled.map((webhook) => webhook.id),
    at,
  );
  const free = new Map(
    enabled.map((webhook) => [
      webhook.id,
      (webhook.consecutive_failures > 0 ? 1 : options.perWebhook) - (inFlight.get(webhook.id) ?? 0),
    ]),
  );
  const picked = pick(await sendableOf(trx, enabled, free, at), free, options.limit);
  if (picked.length > 0) claim.claimed = await lease(trx, picked, at, options.leaseMs);
  return claim;
}

/**
 * The webhooks a claim has work at, the longest-waiting first, locked: enabled ones with a sendable
 * delivery and, by a first count of their leases, a free slot (a filter only, so that webhooks whose slots
 * are all taken do not crowd out the others; the count that decides is made under the lock); enabled ones
 * holding deliveries; disabled ones with pending deliveries. Each look into the deliveries stops at its
 * first row, along an index.
 */
async function lockWebhooksToServe(trx: Executor, options: Pick<ClaimOptions, 'clock' | 'perWebhook'>) {
  const { byDatabase, now } = preparedNow(trx, options.clock);
  const rows = await WEBHOOKS_TO_SERVE.execute(trx, { byDatabase }, { now, perWebhook: options.perWebhook });
  // PostgreSQL answers booleans, SQLite 0 or 1.
  const yes = (value: unknown) => value === true || Number(value) === 1;
  return rows.map((row) => ({
    id: row.id,
    is_enabled: row.is_enabled,
    consecutive_failures: row.consecutive_failures,
    holds: yes(row.holds),
    gateOpen: yes(row.gate_open),
  }));
}

/**
 * The statement of `lockWebhooksToServe`, built and compiled once: its building costs more than its run. Its
 * constants are literals, not bound values: PostgreSQL's generic plan for a prepared statement cannot tell a
 * bound 'held' (rare) from 'delivered', and read every delivery of the webhook at each claim; SQLite plans a
 * bound LIMIT a hundred times slower.
 */
const WEBHOOKS_TO_SERVE = new Prepared((trx: Executor, shape: { byDatabase: boolean }) => {
  const now = nowExpression(shape.byDatabase);
  type WebhookScope = ExpressionBuilder<Database, 'webhooks'>;
  const deliveriesOf = (eb: WebhookScope) =>
    eb.selectFrom('deliveries').whereRef('deliveries.webhook_id', '=', 'webhooks.id');
  const firstDue = (eb: WebhookScope) =>
    deliveriesOf(eb)
      .select('deliveries.created_at')
      .where((inner) => dueNow(inner, now))
      .orderBy('deliveries.created_at')
      .limit(sql.lit(1));
  const gateOpen = (eb: WebhookScope) =>
    eb.or([eb('webhooks.retry_at', 'is', null), eb('webhooks.retry_at', '<=', now)]);
  const sendable = (eb: WebhookScope) =>
    eb.or([
      eb.and([gateOpen(eb), eb(firstDue(eb), 'is not', null)]),
      eb.exists(
        deliveriesOf(eb)
          .select('deliveries.id')
          .where((inner) => inner.and([asked(inner), dueNow(inner, now)])),
      ),
    ]);
  const leased = (eb: WebhookScope) =>
    eb
      .selectFrom('deliveries as leased')
      .select((inner) => inner.fn.countAll().as('n'))
      .whereRef('leased.webhook_id', '=', 'webhooks.id')
      .where('leased.lease_until', '>', now);
  const slots = (eb: WebhookScope) =>
    eb.case().when('webhooks.consecutive_failures', '>', 0).then(1).else(slot<number>('perWebhook')).end();
  const withStatus = (eb: WebhookScope, status: 'held' | 'pending', idle: boolean) =>
    eb.exists(
      deliveriesOf(eb)
        .select('deliveries.id')
        .where('deliveries.status', '=', sql.lit(status))
        .where((inner) => (idle ? notInFlight(inner, now) : inner.lit(true))),
    );
  let query = trx
    .selectFrom('webhooks')
    .select(['id', 'is_enabled', 'consecutive_failures'])
    .select((eb) => [
      withStatus(eb, 'held', true).as('holds'),
      eb.case().when(gateOpen(eb)).then(1).else(0).end().as('gate_open'),
    ])
    .where((eb) =>
      eb.or([
        eb.and([
          eb('is_enabled', '=', sql.lit(1)),
          // CASE, so that the cheap count of its leases is read first: a webhook whose slots are all taken,
          // the common case under load, is passed over without a look into its queue.
          eb.case().when(leased(eb), '<', slots(eb)).then(sendable(eb)).else(sql.lit(false)).end(),
        ]),
        eb.and([eb('is_enabled', '=', sql.lit(1)), withStatus(eb, 'held', true)]),
        eb.and([eb('is_enabled', '=', sql.lit(0)), withStatus(eb, 'pending', false)]),
      ]),
    )
    // Repairs first (they have nothing sendable yet), then the longest-waiting.
    .orderBy((eb) => eb.fn.coalesce(firstDue(eb), eb.val(0)))
    .orderBy('id')
    .limit(sql.lit(WEBHOOKS_PER_CLAIM));
  if (isPostgres(trx)) query = query.forNoKeyUpdate().skipLocked();
  return query;
});

type ServedWebhook = Awaited<ReturnType<typeof lockWebhooksToServe>>[number];

/**
 * Requests in flight per webhook: deliveries under a live lease, whatever their status now (one held by an
 * edit while its request is out still fills its slot). Read after the webhooks were locked, so on
 * PostgreSQL it sees every claim committed before.
 */
async function countInFlight(trx: Executor, webhookIds: string[], { byDatabase, now }: PreparedNow) {
  const shape = { byDatabase, webhooks: webhookIds.length };
  const rows = await IN_FLIGHT.execute(trx, shape, { now, webhookIds });
  return new Map(rows.map((row) => [row.webhook_id, Number(row.n)]));
}

const IN_FLIGHT = new Prepared((trx: Executor, shape: { byDatabase: boolean; webhooks: number }) =>
  trx
    .selectFrom('deliveries')
    .select(['webhook_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('webhook_id', 'in', slots<string>('webhookIds', shape.webhooks))
    .where('lease_until', '>', nowExpression(shape.byDatabase))
    .groupBy('webhook_id'),
);

/**
 * The first sendable deliveries of each webhook with a free slot, as many as its free slots at most: the
 * ones asked for first, then, past the retry gate, the oldest. One statement of bounded scans along the
 * indexes (two per webhook), however many deliveries wait.
 */
async function sendableOf(
  trx: Executor,
  webhooks: readonly Pick<ServedWebhook, 'id' | 'gateOpen'>[],
  free: ReadonlyMap<string, number>,
  { byDatabase, now }: PreparedNow,
) {
  const open = webhooks.filter((webhook) => (free.get(webhook.id) ?? 0) > 0);
  if (open.length === 0) return [];
  const scans = open.flatMap((webhook, index) => {
    const limit = free.get(webhook.id) ?? 0;
    const scan = (onlyAsked: boolean): SendableScan => ({ webhook: index, onlyAsked, limit });
    return webhook.gateOpen ? [scan(true), scan(false)] : [scan(true)];
  });
  const webhookIds = open.map((webhook) => webhook.id);
  const rows = await SENDABLE.execute(trx, { byDatabase, scans }, { now, webhookIds });
  return rows
    .map((row) => ({ ...row, asked: Number(row.asked), created_at: Number(row.created_at) }))
    .sort((a, b) => b.asked - a.asked || a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
}

/** One bounded scan of a webhook's deliveries: the webhook's place in the list, what it takes, how many. */
interface SendableScan {
  webhook: number;
  onlyAsked: boolean;
  limit: number;
}

/**
 * The statement of `sendableOf`, compiled once per shape (the scans, with their limits as literals: SQLite
 * plans a bound LIMIT a hundred times slower).
 */
const SENDABLE = new Prepared((trx: Executor, shape: { byDatabase: boolean; scans: SendableScan[] }) => {
  const now = nowExpression(shape.byDatabase);
  const scans = shape.scans.map(({ webhook, onlyAsked, limit }, k) => {
    const scan = trx
      .selectFrom('deliveries')
      .select(['deliveries.id', 'deliveries.webhook_id', 'deliveries.created_at'])
      .select(sql.lit(onlyAsked ? 1 : 0).as('asked'))
      .where('deliveries.webhook_id', '=', slot<string>('webhookIds', webhook))
      .where((eb) => (onlyAsked ? eb.and([asked(eb), dueNow(eb, now)]) : dueNow(eb, now)))
      .orderBy('deliveries.created_at')
      .orderBy('deliveries.id')
      .limit(sql.lit(limit));
    // A member with its own LIMIT must be a derived table on both databases.
    return trx.selectFrom(scan.as(`scan${k}`)).selectAll();
  });
  const [head, ...rest] = scans;
  return rest.reduce((union, scan) => union.unionAll(scan), head!);
});

/** Takes candidates in their order, each once, no more per webhook than its free slots, `limit` in all. */
function pick(
  candidates: readonly { id: string; webhook_id: string }[],
  free: ReadonlyMap<string, number>,
  limit: number,
): string[] {
  const left = new Map(free);
  const picked = new Set<string>();
  for (const candidate of candidates) {
    if (picked.size === limit) break;
    const slots = left.get(candidate.webhook_id) ?? 0;
    if (slots <= 0 || picked.has(candidate.id)) continue;
    left.set(candidate.webhook_id, slots - 1);
    picked.add(candidate.id);
  }
  return [...picked];
}

/**
 * Leases the picked deliveries (each lease's end is its run's fence) and reads what sending them needs: one
 * statement on PostgreSQL (the update as a WITH clause), two on SQLite, whose RETURNING cannot join.
 */
async function lease(
  trx: Executor,
  picked: string[],
  { byDatabase, now }: PreparedNow,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  const shape = { byDatabase, count: picked.length };
  const values = { now, picked, leaseMs };
  if (!isPostgres(trx)) await LEASE.execute(trx, shape, values);
  const claimed = await LEASED.execute(trx, shape, values);
  return claimed.map((row) => ({
    ...row,
    attempts: Number(row.attempts),
    lease_until: Number(row.lease_until),
    consecutive_failures: Number(row.consecutive_failures),
    occurred_at: Number(row.occurred_at),
    claimed_at: Number(row.claimed_at),
  }));
}

type LeaseShape = { byDatabase: boolean; count: number };

const leaseUpdate = (trx: Executor, shape: LeaseShape) =>
  trx
    .updateTable('deliveries')
    .set((eb) => ({
      lease_until: eb(nowExpression(shape.byDatabase), '+', slot<number>('leaseMs')),
      retry_requested: 0,
    }))
    .where('id', 'in', slots<string>('picked', shape.count));

/** SQLite's lease, whose RETURNING cannot join. */
const LEASE = new Prepared(leaseUpdate);

/** What sending the leased deliveries needs: on PostgreSQL with the lease itself, as a WITH clause. */
const LEASED = new Prepared((trx: Executor, shape: LeaseShape) => {
  const leased = isPostgres(trx)
    ? trx.with('leased', () => leaseUpdate(trx, shape).returning(LEASED_COLUMNS)).selectFrom('leased')
    : trx.selectFrom(
        trx
          .selectFrom('deliveries')
          .select(LEASED_COLUMNS)
          .where('id', 'in', slots<string>('picked', shape.count))
          .as('leased'),
      );
  return leased
    .innerJoin('notifications', 'notifications.id', 'leased.notification_id')
    .innerJoin('webhooks', 'webhooks.id', 'leased.webhook_id')
    .select([
      'leased.id',
      'leased.attempts',
      'leased.lease_until',
      'leased.notification_id',
      'leased.webhook_id',
      'leased.traceparent',
      'webhooks.user_id',
      'webhooks.consecutive_failures',
      'notifications.payload',
      'notifications.occurred_at',
      'webhooks.kind',
      'webhooks.url',
      'webhooks.headers',
      'webhooks.secret_sealed',
      'webhooks.previous_secret_sealed',
      'webhooks.previous_secret_expires_at',
    ])
    .select((eb) => eb(eb.ref('leased.lease_until'), '-', slot<number>('leaseMs')).as('claimed_at'))
    .orderBy('leased.created_at')
    .orderBy('leased.id');
});

const LEASED_COLUMNS = [
  'id',
  'attempts',
  'notification_id',
  'webhook_id',
  'lease_until',
  'created_at',
  'traceparent',
] as const;
