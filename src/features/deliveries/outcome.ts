import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { databaseNow, preparedNow } from '../../db/now.js';
import { transaction } from '../../db/transaction.js';
import { lockUser, touchSubscriptions } from '../users/repo.js';
import { nextVersion } from '../webhooks/repo.js';
import type { ClaimedDelivery } from './claim-repo.js';
import * as repo from './repo.js';
import { resumeEndpoint } from './release.js';
import { parseRetryAfter, webhookRetryDelay } from './schedule.js';
import type { SendOutcome } from './send.js';

/** The 10th consecutive failed request disables the webhook (docs/rules/webhooks.md#retries). */
export const FAILURES_TO_DISABLE = 10;

/** What recording an outcome came to: whether it was recorded (a run fenced out records nothing). */
export interface Recorded {
  recorded: boolean;
}

/** A run's request and what it came to. */
export interface RunOutcome {
  delivery: ClaimedDelivery;
  sent: SendOutcome;
}

/**
 * Every write of an outcome is fenced by the run's claim: a run that no longer holds its delivery's latest
 * claim (its lease ran out and another run took it, it was given back, or the webhook was deleted with its
 * deliveries) records nothing. Locks are taken in one order everywhere: the owner's row, the webhook's,
 * then its deliveries (docs/deliveries.md#locks).
 */

/**
 * The successes of a moment, recorded together: each row on its own (one that is fenced out is simply left,
 * and sinks none of the others), its request kept on it (a success is not a row of the attempt log), then
 * the notifications of those that held their lease, in one transaction. None of them locks its webhook or
 * can change whether it is enabled. One result per outcome, in order. Successes
 * that end a failing streak (a probe's) go by `recordOutcome`.
 */
export async function recordSuccesses(ctx: AppContext, outcomes: readonly RunOutcome[]): Promise<Recorded[]> {
  const runs = outcomes.map(({ delivery, sent }) => ({
    id: delivery.id,
    lease_until: delivery.lease_until,
    attempt: sent.attempt,
  }));
  const rows = await transaction(ctx.db, async (trx) => {
    const ended = await repo.endLeasesDelivered(trx, runs, preparedNow(trx, ctx.clock));
    await repo.setNotificationsStatus(
      trx,
      ended.map((row) => row.notification_id),
      'delivered',
    );
    return ended;
  });
  ctx.alertMetrics.notificationsEntered(ctx.db, 'delivered', null, rows.length);
  const recorded = new Set(rows.map((row) => row.id));
  return outcomes.map((outcome): Recorded => ({ recorded: recorded.has(outcome.delivery.id) }));
}

/**
 * A failure, or a probe's success, each in a transaction of its own: both lock the webhook before reading
 * it (a failure may disable it, and so touch its owner's row, locked first; a probe's success opens its
 * gate for everything waiting).
 */
export async function recordOutcome(
  ctx: AppContext,
  { delivery, sent }: RunOutcome,
  pause?: (trx: Executor) => Promise<void>,
): Promise<Recorded> {
  const recorded = await transaction(ctx.db, async (trx) => {
    if (sent.ok) return recordProbeSuccess(ctx, trx, delivery, sent);
    await lockUser(trx, delivery.user_id);
    const webhook = await repo.lockWebhook(trx, delivery.webhook_id);
    await pause?.(trx);
    if (webhook === undefined) return false;
    return recordFailure(ctx, trx, delivery, webhook, sent);
  });
  return { recorded };
}

async function recordProbeSuccess(
  ctx: AppContext,
  trx: Executor,
  delivery: ClaimedDelivery,
  sent: SendOutcome,
): Promise<boolean> {
  await repo.lockWebhook(trx, delivery.webhook_id);
  const ended = await repo.endLease(trx, delivery, databaseNow(trx, ctx.clock), {
    status: 'delivered',
    attempt: sent.attempt,
  });
  if (ended === undefined) return false;
  await repo.setNotificationStatus(trx, ended.notification_id, 'delivered');
  await resumeEndpoint(ctx, trx, delivery.webhook_id);
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
  const now = databaseNow(trx, ctx.clock);
  if (!(await repo.holdsClaim(trx, delivery, now))) return false;
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
  const ended = await repo.endLease(trx, delivery, now, {
    status: waits ? 'pending' : 'held',
    nextAttemptAt: waits ? retryAt : null,
    attempt: sent.attempt,
  });
  if (ended === undefined) return false;
  await repo.insertAttempts(trx, [sent.attempt]);
  await repo.setNotificationStatus(trx, ended.notification_id, ended.status);
  if (disable) await disableWebhook(ctx, trx, webhook, gone ? 'gone' : 'failing', failures);
  else if (!waits) ctx.alertMetrics.notificationsEntered(trx, 'held', null);
  return true;
}

/** How the owner's e-mail names the endpoint and what makes it send again. */
const WEBHOOK_REMEDY = {
  what: 'Webhook',
  path: 'webhook',
  remedy: 'verify the webhook again',
  again: 'verify',
  then: 'and',
};
const CHANNEL_REMEDY = {
  what: 'Channel',
  path: 'channel',
  remedy: 'test the channel',
  again: 'test',
  then: 'and once it answers 2xx',
};

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
  // A channel has no challenge: a successful test is what enables it again.
  const { what, path, remedy, again, then } = webhook.kind === 'webhook' ? WEBHOOK_REMEDY : CHANNEL_REMEDY;
  await ctx.mailer.enqueue(trx, {
    to: owner.email,
    subject:
      reason === 'gone'
        ? `${what} "${webhook.name}" was disabled: its endpoint answered 410 Gone`
        : `${what} "${webhook.name}" was disabled after ${failures} failed notifications`,
    text: [
      `Your ${path} "${webhook.name}" (${webhook.url}) ${why}`,
      `and has been disabled. Notifications for it are held, not lost: ${remedy}`,
      `(POST /api/v1/${path}/${webhook.id}/${again}) ${then} they are sent, oldest first.`,
      '',
      `${ctx.config.publicUrl}/api/v1/${path}/${webhook.id}`,
      '',
    ].join('\n'),
  });
  ctx.logger.warn({ webhook: webhook.id, failures, reason }, 'webhook disabled');
}
