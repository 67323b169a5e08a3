import type { ServiceContext } from '../../context.js';
import { transaction } from '../../db/transaction.js';
import type { DeliveryStatus } from '../../db/types.js';
import { conflict, notFound } from '../../http/errors.js';
import { instant } from '../../http/instants.js';
import { mapPage, type Page, type PageRequest } from '../../http/lists.js';
import { isoUtc, isoUtcOrNull } from '../../lib/clock.js';
import { loadOwnWebhook, requireEnabled } from '../webhooks/service.js';
import * as log from './log-repo.js';
import { requeueDeliveries } from './start.js';

function present(row: log.DeliveryLogRow) {
  return {
    id: row.id,
    notification_id: row.notification_id,
    alert: { id: row.alert_id, name: row.alert_name },
    type: row.type,
    status: row.status,
    attempts: row.attempts,
    last_attempt_at: isoUtcOrNull(row.last_attempt_at),
    next_attempt_at: isoUtcOrNull(row.next_attempt_at),
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: isoUtc(row.created_at),
    delivered_at: isoUtcOrNull(row.delivered_at),
  };
}

export type DeliveryLogJson = ReturnType<typeof present>;

export interface DeliveryLogQuery {
  status?: DeliveryStatus;
  start_date?: string;
  end_date?: string;
}

/** A page of the deliveries of one of the caller's webhooks, newest first. */
export async function listWebhookDeliveries(
  ctx: ServiceContext,
  webhookId: string,
  query: DeliveryLogQuery,
  page: PageRequest,
): Promise<Page<DeliveryLogJson>> {
  const from = instant('start_date', query.start_date);
  const to = instant('end_date', query.end_date);
  await loadOwnWebhook(ctx, webhookId);
  const found = await log.listDeliveries(
    ctx.db,
    {
      webhookId,
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
    },
    page,
  );
  return mapPage(found, present);
}

async function loadDelivery(ctx: ServiceContext, webhookId: string, deliveryId: string) {
  const row = await log.findDelivery(ctx.db, webhookId, deliveryId);
  if (row === undefined) throw notFound('Delivery');
  return row;
}

/** One delivery of one of the caller's webhooks, with every request made for it. */
export async function getWebhookDelivery(ctx: ServiceContext, webhookId: string, deliveryId: string) {
  await loadOwnWebhook(ctx, webhookId);
  const row = await loadDelivery(ctx, webhookId, deliveryId);
  const attempts = await log.attemptsOf(ctx.db, [deliveryId]);
  return { ...present(row), attempt_log: attempts.map(presentAttempt) };
}

/** One request made for a delivery, as the delivery log and a notification's detail show it. */
export function presentAttempt(attempt: log.DeliveryAttemptRow) {
  return {
    at: isoUtc(attempt.at),
    duration_ms: attempt.duration_ms,
    status_code: attempt.status_code,
    failure: attempt.failure,
    error: attempt.error,
    response: attempt.response,
  };
}

const RETRYABLE: DeliveryStatus[] = ['failed', 'expired'];

/**
 * A failed or expired delivery sent again, now (after the webhook's own retry time, should it be failing):
 * the same delivery id, so a receiver that already has it recognizes it.
 */
export async function retryDelivery(ctx: ServiceContext, webhookId: string, deliveryId: string) {
  const webhook = await loadOwnWebhook(ctx, webhookId);
  requireEnabled(webhook);
  const row = await loadDelivery(ctx, webhookId, deliveryId);
  if (!RETRYABLE.includes(row.status)) {
    throw conflict(
      `The delivery is ${row.status}: only a failed or expired one can be sent again` +
        (row.status === 'delivered' ? ' (a delivered one is sent again by a replay).' : '.'),
    );
  }
  await transaction(ctx.db, (trx) => requeueDeliveries(ctx, trx, [row]));
  return present((await log.findDelivery(ctx.db, webhookId, deliveryId)) ?? row);
}

/**
 * Every notification the webhook was sent (delivered, failed or expired) since a time, sent again with
 * its own delivery id, oldest first: for a receiver that lost what it had. Pending and held ones are on
 * their way already. Returns how many were queued.
 */
export async function replayWebhook(ctx: ServiceContext, webhookId: string, sinceText: string) {
  const since = instant('since', sinceText, 'body') as number;
  const webhook = await loadOwnWebhook(ctx, webhookId);
  requireEnabled(webhook);
  const queued = await transaction(ctx.db, async (trx) => {
    const rows = await log.replayable(trx, webhookId, since);
    await requeueDeliveries(ctx, trx, rows);
    return rows.length;
  });
  ctx.logger.info({ webhook: webhookId, queued }, 'webhook replay queued');
  return { queued };
}
