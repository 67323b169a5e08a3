import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { databaseNow } from '../../db/now.js';
import { transaction } from '../../db/transaction.js';
import { lockUser, touchSubscriptions } from '../users/repo.js';
import { nextVersion } from '../webhooks/repo.js';
import type { ClaimedDelivery } from './claim-repo.js';
import * as repo from './repo.js';
import { parseRetryAfter, webhookRetryDelay } from './schedule.js';
import type { SendOutcome } from './send.js';

/** The 10th consecutive failed request disables the webhook (docs/rules/webhooks.md#retries). */
export const FAILURES_TO_DISABLE = 10;

/**
 * Records what a run's request came to. Every write is fenced by the run's claim: a run that no longer
 * holds its delivery's latest claim (its lease ran out and another run took it, it was given back, or the
 * webhook was deleted with its deliveries) records nothing. Returns whether it was recorded.
 *
 * Locks are taken in one order everywhere: the owner's row, the webhook's, then its deliveries
 * (docs/deliveries.md#locks). A success shares a transaction with others (group commit, a savepoint each)
 * and touches its webhook only when it ends a failing streak. A failure, which may disable the webhook and
 * so touch its owner's row, has a transaction of its own.
 */
export function recordOutcome(
  ctx: AppContext,
  delivery: ClaimedDelivery,
  sent: SendOutcome,
  pause?: (trx: Executor) => Promise<void>,
): Promise<boolean> {
  if (sent.ok) return ctx.commits.run((trx) => recordSuccess(ctx, trx, delivery, sent));
  return transaction(ctx.db, async (trx) => {
    await lockUser(trx, delivery.user_id);
    const webhook = await repo.lockWebhook(trx, delivery.webhook_id);
    await pause?.(trx);
    if (webhook === undefined) return false;
    return recordFailure(ctx, trx, delivery, webhook, sent);
  });
}

async function recordSuccess(
  ctx: AppContext,
  trx: Executor,
  delivery: ClaimedDelivery,
  sent: SendOutcome,
): Promise<boolean> {
  // The probe of a failing webhook: its success opens the gate for everything waiting.
  const probe = delivery.consecutive_failures > 0;
  if (probe) await repo.lockWebhook(trx, delivery.webhook_id);
  const ended = await repo.endLease(trx, delivery, { status: 'delivered', attempt: sent.attempt });
  if (ended === undefined) return false;
  await repo.insertAttempt(trx, sent.attempt);
  await repo.setNotificationStatus(trx, ended.notification_id, 'delivered');
  if (probe) await repo.clearFailures(trx, delivery.webhook_id);
  ctx.alertMetrics.notificationsEntered(trx, 'delivered', null);
  return true;
}

/**
 * A failed request counts against its webhook once per burst: requests claimed before a counted failure
 * fail with it and are not counted again. Then the delivery waits for the webhook's retry time; or the
 * webhook is disabled (410 at once, else the 10th failure) and what it had pending is held.
 */
async function recordFailure(
  ctx: AppContext,
  trx: Executor,
  delivery: ClaimedDelivery,
  webhook: repo.LockedWebhook,
  sent: SendOutcome,
): Promise<boolean> {
  // A run that lost its claim counts nothing against the webhook either: the newer run speaks for it.
  if (!(await repo.holdsClaim(trx, delivery))) return false;
  const now = databaseNow(trx, ctx.clock);
  const sameBurst = webhook.last_failure_at !== null && Number(webhook.last_failure_at) > delivery.claimed_at;
  // Not counted again, it waits for the gate its burst shut; a success since opened it: due at once.
  let retryAt: number | typeof now = webhook.retry_at === null ? now : Number(webhook.retry_at);
  let failures = webhook.consecutive_failures;
  if (!sameBurst) {
    failures += 1;
    const delay = webhookRetryDelay(
      failures,
      ctx.config.deliveryRetryScheduleMs,
      parseRetryAfter(sent.retryAfter, ctx.clock.now()),
    );
    retryAt = await repo.countFailure(trx, webhook.id, failures, now, delay);
  }
  const gone = sent.status === 410;
  const disable = webhook.is_enabled === 1 && (gone || failures >= FAILURES_TO_DISABLE);
  const waits = webhook.is_enabled === 1 && !disable;
  const ended = await repo.endLease(trx, delivery, {
    status: waits ? 'pending' : 'held',
    nextAttemptAt: waits ? retryAt : null,
    attempt: sent.attempt,
  });
  if (ended === undefined) return false;
  await repo.insertAttempt(trx, sent.attempt);
  await repo.setNotificationStatus(trx, ended.notification_id, ended.status);
  if (disable) await disableWebhook(ctx, trx, webhook, gone ? 'gone' : 'failing', failures);
  else if (!waits) ctx.alertMetrics.notificationsEntered(trx, 'held', null);
  return true;
}

async function disableWebhook(
  ctx: AppContext,
  trx: Executor,
  webhook: repo.LockedWebhook,
  reason: 'gone' | 'failing',
  failures: number,
): Promise<void> {
  await trx
    .updateTable('webhooks')
    .set({
      is_enabled: 0,
      disabled_reason: reason,
      updated_at: nextVersion(Number(webhook.updated_at), ctx.clock.now()),
    })
    .where('id', '=', webhook.id)
    .execute();
  await touchSubscriptions(trx, webhook.user_id);
  const held = await repo.holdPending(trx, webhook.id);
  ctx.alertMetrics.notificationsEntered(trx, 'held', null, held + 1);
  const owner = await trx
    .selectFrom('users')
    .select('email')
    .where('id', '=', webhook.user_id)
    .executeTakeFirstOrThrow();
  const why =
    reason === 'gone'
      ? 'answered 410 Gone to a notification'
      : `failed ${failures} notification requests in a row`;
  await ctx.mailer.enqueue(trx, {
    to: owner.email,
    subject:
      reason === 'gone'
        ? `Webhook "${webhook.name}" was disabled: its endpoint answered 410 Gone`
        : `Webhook "${webhook.name}" was disabled after ${failures} failed notifications`,
    text: [
      `Your webhook "${webhook.name}" (${webhook.url}) ${why}`,
      'and has been disabled. Notifications for it are held, not lost: verify the webhook again',
      `(POST /api/v1/webhook/${webhook.id}/verify) and they are sent, oldest first.`,
      '',
      `${ctx.config.publicUrl}/api/v1/webhook/${webhook.id}`,
      '',
    ].join('\n'),
  });
  ctx.logger.warn({ webhook: webhook.id, failures, reason }, 'webhook disabled');
}
