import type { AppContext } from '../../context.js';
import { transaction } from '../../db/transaction.js';
import type { Executor } from '../../db/types.js';
import { DELIVERIES_WAKE } from './dispatcher.js';
import { inChunks } from '../../db/chunks.js';
import * as repo from './repo.js';
import { requeueDeliveries } from './start.js';

/** Held notifications older than this, or beyond the newest MAX_HELD of a webhook, expire (docs/rules/webhooks.md#held-notifications). */
export const HELD_FOR_AT_MOST_MS = 7 * 86_400_000;
export const MAX_HELD = 1_000;

/**
 * Marks held deliveries (and their notifications) expired: too old, or beyond the newest MAX_HELD. One in
 * flight (held by a disabling while its request was out) is left to its outcome: a later run expires it.
 * Returns how many notifications expired.
 */
export async function expireHeld(db: Executor, webhookId: string, now: number): Promise<number> {
  const newest = await db
    .selectFrom('deliveries')
    .select('created_at')
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'held')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(MAX_HELD - 1)
    .limit(1)
    .executeTakeFirst();
  const cutoff = Math.max(now - HELD_FOR_AT_MOST_MS, newest === undefined ? 0 : newest.created_at);
  // Deliveries first, then their notifications, as every writer does (docs/deliveries.md#locks).
  const expiring = await db
    .updateTable('deliveries')
    .set({ status: 'expired' })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'held')
    .where('lease_until', 'is', null)
    .where('created_at', '<', cutoff)
    .returning('notification_id')
    .execute();
  return inChunks(
    expiring.map((row) => row.notification_id),
    async (ids) => {
      const result = await db
        .updateTable('notifications')
        .set({ status: 'expired', reason: 'held_too_long' })
        .where('id', 'in', ids)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  );
}

/**
 * A webhook verified again: its held deliveries go out, oldest first, in the transaction that enables
 * it. Those held too long expire instead.
 */
export async function releaseHeld(ctx: AppContext, trx: Executor, webhookId: string): Promise<number> {
  const now = ctx.clock.now();
  ctx.alertMetrics.notificationsEntered(
    trx,
    'expired',
    'held_too_long',
    await expireHeld(trx, webhookId, now),
  );
  const held = await trx
    .selectFrom('deliveries')
    .select(['id', 'notification_id'])
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'held')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  await trx
    .updateTable('webhooks')
    .set({ consecutive_failures: 0, retry_at: null })
    .where('id', '=', webhookId)
    .execute();
  return requeueDeliveries(ctx, trx, held, ['held']);
}

/**
 * A probe succeeded (the first success after failures, a retry asked for, a test): the endpoint answers
 * again, so its gate opens and everything of it that waited for a later time is due now, oldest first.
 * The caller holds the webhook's lock.
 */
export async function resumeEndpoint(ctx: AppContext, trx: Executor, webhookId: string): Promise<void> {
  await repo.clearFailures(trx, webhookId);
  if ((await repo.makeWaitingDue(trx, webhookId, ctx.jobs.now(trx))) > 0) {
    await ctx.jobs.wakeAfterCommit(trx, DELIVERIES_WAKE);
  }
}

/** A test of an enabled endpoint answered 2xx: a probe like any other (see resumeEndpoint). */
export async function resumeAfterTest(ctx: AppContext, webhookId: string): Promise<void> {
  await transaction(ctx.db, async (trx) => {
    const webhook = await repo.lockWebhook(trx, webhookId);
    if (webhook?.is_enabled === 1) await resumeEndpoint(ctx, trx, webhookId);
  });
}

/** Expires what every disabled webhook has held too long or beyond its newest MAX_HELD. */
export async function expireAllHeld(db: Executor, now: number): Promise<number> {
  const webhooks = await db
    .selectFrom('deliveries')
    .select('webhook_id')
    .distinct()
    .where('status', '=', 'held')
    .execute();
  let expired = 0;
  for (const { webhook_id: webhookId } of webhooks) expired += await expireHeld(db, webhookId, now);
  return expired;
}
