import type { ServiceContext } from '../../context.js';
import { transaction } from '../../db/transaction.js';
import type { DeliveryStatus, Executor } from '../../db/types.js';
import { conflict, notFound, unprocessable } from '../../http/errors.js';
import { instant } from '../../http/instants.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { isoUtc, isoUtcOrNull } from '../../lib/clock.js';
import { contextsOf, type NotificationContext } from '../notifications/names.js';
import type { NotificationPayload } from '../notifications/payload.js';
import { WEBHOOK } from '../webhooks/repo.js';
import { DISABLED_WEBHOOK_MESSAGE, loadOwnWebhook, requireEnabled } from '../webhooks/service.js';
import { readWebhookForDelivery } from './repo.js';
import * as log from './log-repo.js';
import { requeueDeliveries } from './start.js';

function present(row: log.DeliveryLogRow, context: NotificationContext) {
  return {
    id: row.id,
    notification_id: row.notification_id,
    alert: { id: row.alert_id, name: row.alert_name },
    type: row.type,
    organization: context.organization,
    node: context.node,
    resource: context.resource,
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

/** Deliveries as the log shows them, each with its notification's organization, node and resource by name. */
async function presentAll(db: Executor, rows: readonly log.DeliveryLogRow[]): Promise<DeliveryLogJson[]> {
  const contexts = await contextsOf(
    db,
    rows.map((row) => ({ ...row, payload: JSON.parse(row.payload) as NotificationPayload })),
  );
  return rows.map((row, index) => present(row, contexts[index]!));
}

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
  kinds = WEBHOOK,
): Promise<Page<DeliveryLogJson>> {
  const from = instant('start_date', query.start_date);
  const to = instant('end_date', query.end_date);
  await loadOwnWebhook(ctx, webhookId, kinds);
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
  return { total_count: found.total_count, results: await presentAll(ctx.db, found.results) };
}

async function loadDelivery(ctx: ServiceContext, webhookId: string, deliveryId: string) {
  const row = await log.findDelivery(ctx.db, webhookId, deliveryId);
  if (row === undefined) throw notFound('Delivery');
  return row;
}

/** One delivery of one of the caller's webhooks, with every request made for it. */
export async function getWebhookDelivery(
  ctx: ServiceContext,
  webhookId: string,
  deliveryId: string,
  kinds = WEBHOOK,
) {
  await loadOwnWebhook(ctx, webhookId, kinds);
  const row = await loadDelivery(ctx, webhookId, deliveryId);
  const attempts = await log.attemptsOf(ctx.db, [deliveryId]);
  const [entry] = await presentAll(ctx.db, [row]);
  return { ...entry!, attempt_log: attempts.map(presentAttempt) };
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

const RETRYABLE: DeliveryStatus[] = ['failed', 'expired', 'pending'];

/**
 * Inside the transaction that sends again, the webhook as it is now: enabled, or 422. A disable racing this
 * transaction holds what it made pending at the next claim.
 */
async function requireEnabledNow(trx: Executor, webhookId: string): Promise<void> {
  const webhook = await readWebhookForDelivery(trx, webhookId);
  if (webhook?.is_enabled !== 1) throw unprocessable(DISABLED_WEBHOOK_MESSAGE);
}

/**
 * A delivery sent again now, with the same delivery id, so a receiver that already has it recognizes it:
 * a failed or expired one, or a pending one waiting for its webhook's retry time. It is the webhook's next
 * request even before that time (a failing webhook still gets one request at a time).
 */
export async function retryDelivery(
  ctx: ServiceContext,
  webhookId: string,
  deliveryId: string,
  kinds = WEBHOOK,
) {
  requireEnabled(await loadOwnWebhook(ctx, webhookId, kinds));
  const row = await loadDelivery(ctx, webhookId, deliveryId);
  if (!RETRYABLE.includes(row.status)) {
    throw conflict(
      `The delivery is ${row.status}: only a failed, expired or pending one can be sent again` +
        (row.status === 'delivered' ? ' (a delivered one is sent again by a replay).' : '.'),
    );
  }
  const moved = await transaction(ctx.db, async (trx) => {
    await requireEnabledNow(trx, webhookId);
    return requeueDeliveries(ctx, trx, [row], RETRYABLE, { retryRequested: true });
  });
  if (moved === 0) {
    const now = await loadDelivery(ctx, webhookId, deliveryId);
    throw conflict(`The delivery became ${now.status} meanwhile; it was not sent again.`);
  }
  const [entry] = await presentAll(ctx.db, [(await log.findDelivery(ctx.db, webhookId, deliveryId)) ?? row]);
  return entry!;
}

/**
 * Every notification the webhook was sent (delivered, failed or expired) since a time, sent again with
 * its own delivery id, oldest first: for a receiver that lost what it had. Pending and held ones are on
 * their way already. Returns how many were queued.
 */
export async function replayWebhook(
  ctx: ServiceContext,
  webhookId: string,
  sinceText: string,
  kinds = WEBHOOK,
) {
  const since = instant('since', sinceText, 'body') as number;
  requireEnabled(await loadOwnWebhook(ctx, webhookId, kinds));
  const queued = await transaction(ctx.db, async (trx) => {
    await requireEnabledNow(trx, webhookId);
    const rows = await log.replayable(trx, webhookId, since);
    return requeueDeliveries(ctx, trx, rows, log.REPLAYABLE);
  });
  ctx.logger.info({ webhook: webhookId, queued }, 'webhook replay queued');
  return { queued };
}
