import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import type { JobHandler, JobRun } from '../../jobs/worker.js';
import { isPostgres } from '../../db/connect.js';
import { JOB_REMOVED, RetryJobAt, type JobRemoved } from '../../jobs/outcomes.js';
import { newId } from '../../lib/ids.js';
import { TickBatch } from '../../lib/tick-batch.js';
import { OutboundError, type OutboundResponse } from '../../net/outbound.js';
import { touchSubscriptions } from '../users/repo.js';
import { notificationHeaders } from '../webhooks/test-send.js';
import { PerKeyLimiter } from './limiter.js';
import * as repo from './repo.js';
import { parseRetryAfter, webhookRetryDelay } from './schedule.js';
import { WEBHOOK_DELIVERY, type DeliveryJob } from './start.js';

/** The 10th consecutive failed request disables the webhook (contract §3). */
export const FAILURES_TO_DISABLE = 10;
const RESPONSE_KEPT_BYTES = 1_024;

type Sent = { response: OutboundResponse } | { error: OutboundError };

/**
 * What the deliveries of one process share: the per-webhook slots, and the batches in which the deliveries
 * that run together are read and, when they succeed, recorded (a few statements for all of them).
 */
interface Deliverer {
  ctx: AppContext;
  slots: PerKeyLimiter;
  read: TickBatch<string, repo.DeliveryToSend | undefined>;
  delivered: TickBatch<repo.Delivered, void>;
}

function deliverer(ctx: AppContext): Deliverer {
  return {
    ctx,
    slots: new PerKeyLimiter(ctx.config.deliveryConcurrencyPerWebhook),
    // The jobs started together (by a commit, or by a claim) all ask at once.
    read: new TickBatch((ids) => repo.findDeliveriesToSend(ctx.db, ids), { gather: 'now' }),
    delivered: new TickBatch(async (done) => {
      // One statement on PostgreSQL commits by itself; on SQLite the writes share the next commit.
      if (isPostgres(ctx.db)) await repo.recordDelivered(ctx.db, done);
      else await ctx.commits.run((trx) => repo.recordDelivered(trx, done));
      ctx.alertMetrics.notificationsEntered(ctx.db, 'delivered', null, done.length);
      ctx.logger.debug({ delivered: done.length }, 'deliveries recorded');
      return done.map(() => undefined);
    }),
  };
}

/**
 * Sends one delivery: signed, outside any transaction, through the guarded client; then records the
 * attempt and its consequences (a success with the others of the moment, a failure on its own). Retries
 * follow the webhook's own gate: after a failed request nothing else goes to it before its retry time,
 * and then one request probes at a time.
 */
async function deliver(sender: Deliverer, deliveryId: string, run: JobRun): Promise<void | JobRemoved> {
  const { ctx, slots } = sender;
  const delivery =
    run.readAlong === undefined
      ? await sender.read.add(deliveryId)
      : ((run.readAlong as repo.DeliveryToSend | null) ?? undefined);
  if (delivery === undefined || delivery.status !== 'pending') return;
  if (delivery.is_enabled !== 1) {
    await repo.setDeliveryStatus(ctx.db, delivery.id, delivery.notification_id, 'held', {
      nextAttemptAt: null,
    });
    return;
  }
  const now = ctx.clock.now();
  if (delivery.retry_at !== null && delivery.retry_at > now) {
    throw new RetryJobAt(delivery.retry_at, 'the webhook is waiting for its next retry time');
  }
  if (delivery.consecutive_failures > 0) {
    const probeUntil = now + ctx.config.deliveryTimeoutMs + 1_000;
    if (!(await repo.takeProbe(ctx.db, delivery.webhook_id, now, probeUntil))) {
      throw new RetryJobAt(delivery.probe_until ?? probeUntil, 'another request is probing the webhook');
    }
  }
  const startedAt = ctx.clock.now();
  const sent = await slots.run(delivery.webhook_id, () => send(ctx, delivery, startedAt));
  const attempt = attemptOf(delivery, startedAt, sent, ctx.clock.now());
  ctx.alertMetrics.deliveryAttempt(attempt.failure ?? 'success');
  if (attempt.failure === null) {
    await sender.delivered.add({
      notificationId: delivery.notification_id,
      webhookId: delivery.webhook_id,
      jobId: run.id,
      attempt,
    });
    ctx.alertMetrics.delivered((attempt.at + attempt.durationMs - delivery.occurred_at) / 1000);
    return JOB_REMOVED;
  }
  await recordFailure(ctx, delivery, startedAt, sent, attempt);
}

async function send(ctx: AppContext, delivery: repo.DeliveryToSend, at: number): Promise<Sent> {
  const headers = notificationHeaders(JSON.parse(delivery.headers) as Record<string, string>, {
    secret: ctx.secretBox.open(delivery.secret_sealed),
    timestamp: String(at),
    deliveryId: delivery.id,
    body: delivery.payload,
  });
  try {
    const response = await ctx.webhookClient.send({
      url: delivery.url,
      method: 'POST',
      headers,
      body: delivery.payload,
      deadlineMs: ctx.config.deliveryTimeoutMs,
      maxBodyBytes: RESPONSE_KEPT_BYTES,
    });
    return { response };
  } catch (error) {
    if (error instanceof OutboundError) return { error };
    throw error;
  }
}

function attemptOf(delivery: repo.DeliveryToSend, at: number, sent: Sent, now: number): repo.AttemptRecord {
  if ('error' in sent) {
    return {
      id: newId(at),
      deliveryId: delivery.id,
      at,
      durationMs: now - at,
      statusCode: null,
      failure: sent.error.kind,
      error: sent.error.message,
      response: null,
    };
  }
  const { status, body, elapsedMs } = sent.response;
  const ok = status >= 200 && status < 300;
  return {
    id: newId(at),
    deliveryId: delivery.id,
    at,
    durationMs: elapsedMs,
    statusCode: status,
    failure: ok ? null : 'bad_status',
    error: ok ? null : `answered ${status}`,
    response: body.subarray(0, RESPONSE_KEPT_BYTES).toString('utf8'),
  };
}

/** A failed request: counted against the webhook (once per burst), then retried, or the webhook disabled. */
async function recordFailure(
  ctx: AppContext,
  delivery: repo.DeliveryToSend,
  startedAt: number,
  sent: Sent,
  attempt: repo.AttemptRecord,
) {
  const now = ctx.clock.now();
  const ids = { delivery: delivery.id, notification: delivery.notification_id, webhook: delivery.webhook_id };
  const retryAt = await ctx.commits.run(async (trx) => {
    await repo.insertAttempt(trx, attempt);
    const retryAfter =
      'response' in sent ? parseRetryAfter(sent.response.headers['retry-after'], now) : undefined;
    const counted = await repo.countFailure(trx, ids.webhook, startedAt, now, (failures) =>
      webhookRetryDelay(failures, ctx.config.deliveryRetryScheduleMs, retryAfter),
    );
    if (counted !== undefined && counted.failures >= FAILURES_TO_DISABLE) {
      await disableFailingWebhook(ctx, trx, delivery, counted.failures);
      await repo.setDeliveryStatus(trx, ids.delivery, ids.notification, 'held', {
        attempt,
        nextAttemptAt: null,
      });
      return undefined;
    }
    const next = counted?.retryAt ?? now;
    await repo.setDeliveryStatus(trx, ids.delivery, ids.notification, 'pending', {
      attempt,
      nextAttemptAt: next,
    });
    return next;
  });
  if (retryAt !== undefined) throw new RetryJobAt(retryAt, attempt.error ?? 'failed');
}

async function disableFailingWebhook(
  ctx: AppContext,
  trx: Executor,
  delivery: repo.DeliveryToSend,
  failures: number,
): Promise<void> {
  await trx
    .updateTable('webhooks')
    .set({ is_enabled: 0, disabled_reason: 'failing', probe_until: null, updated_at: ctx.clock.now() })
    .where('id', '=', delivery.webhook_id)
    .execute();
  await touchSubscriptions(trx, delivery.owner_id);
  ctx.alertMetrics.notificationsEntered(trx, 'held', null, await repo.holdPending(trx, delivery.webhook_id));
  const owner = await trx
    .selectFrom('users')
    .select('email')
    .where('id', '=', delivery.owner_id)
    .executeTakeFirstOrThrow();
  await ctx.mailer.enqueue(trx, {
    to: owner.email,
    subject: `Webhook "${delivery.webhook_name}" was disabled after ${failures} failed notifications`,
    text: [
      `Your webhook "${delivery.webhook_name}" (${delivery.url}) failed ${failures} notification requests in a row`,
      'and has been disabled. Notifications for it are held, not lost: verify the webhook again',
      `(POST /api/v1/webhook/${delivery.webhook_id}/verify) and they are sent, oldest first.`,
      '',
      `${ctx.config.publicUrl}/api/v1/webhook/${delivery.webhook_id}`,
      '',
    ].join('\n'),
  });
  ctx.logger.warn({ webhook: delivery.webhook_id, failures }, 'webhook disabled after consecutive failures');
}

/** Webhook deliveries as a job kind; each process sends at most DELIVERY_CONCURRENCY_PER_WEBHOOK at once per webhook. */
export function webhookDeliveryJob(ctx: AppContext): JobHandler<DeliveryJob> {
  const sender = deliverer(ctx);
  return {
    kind: WEBHOOK_DELIVERY,
    concurrency: 64,
    startOnCommit: true,
    // The claim reads each job's delivery along (PostgreSQL); a job started on commit reads it in a batch.
    readAlong: repo.deliveryToSendByKey(ctx.db),
    handle: (job, run) => deliver(sender, job.deliveryId, run),
  };
}
