import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import { notificationPayload, type EventFacts } from './payload.js';
import type { NotificationType, ResourceKind } from './types.js';
import { cancelNotifications, setNotificationStatus } from '../deliveries/repo.js';
import { startDelivery } from '../deliveries/start.js';
import { coveringSilence } from '../silences/coverage.js';
import { sendByEmail } from './email-storm.js';
import { organizationChain } from './org-chain.js';
import { NODE_UNREACHABLE, nodeUnreachableBehind, type StatesBehind } from './suppression.js';
import {
  insertNotification,
  nodeName,
  setHeldBackStatus,
  type EventRow,
  type WatchingAlert,
} from './repo.js';

/** What the caller already read in this transaction, so that a notification does not read it again. */
export interface Known {
  /** Node names, by node id. */
  names?: ReadonlyMap<string, string>;
  /** The node states behind a tunnel's or a service's change, by the resource's id. */
  statesBehind?: ReadonlyMap<string, StatesBehind>;
}

async function nodeNameOf(trx: Executor, event: EventRow, known: Known | undefined): Promise<string> {
  if (event.resource_kind === 'node') return event.resource_name;
  return known?.names?.get(event.node_id) ?? nodeName(trx, event.node_id);
}

async function factsOf(
  ctx: AppContext,
  trx: Executor,
  event: EventRow,
  known: Known | undefined,
): Promise<EventFacts> {
  const organization = (await organizationChain(ctx, trx, event.org_id))[0] ?? { id: event.org_id, name: '' };
  const nodeName = await nodeNameOf(trx, event, known);
  return {
    id: event.id,
    type: event.type as NotificationType,
    condition: event.condition,
    sequence: event.sequence,
    occurredAt: event.occurred_at,
    organization: { id: organization.id, name: organization.name },
    node: { id: event.node_id, name: nodeName },
    resource: { kind: event.resource_kind as ResourceKind, id: event.resource_id, name: event.resource_name },
    previous: event.previous_state,
    current: event.current_state,
  };
}

/** Why a notification is stored without being sent, and the window behind it. */
export interface Suppression {
  reason: typeof MAINTENANCE | typeof NODE_UNREACHABLE;
  silenceId: string | null;
}

export const MAINTENANCE = 'maintenance';

/**
 * Whether a notification made now is held back: by a maintenance window that covers the change, else (for
 * an alert that asks for it) by an UNREACHABLE node behind a tunnel's or service's change.
 */
export async function suppressionOf(
  ctx: AppContext,
  trx: Executor,
  alert: Pick<WatchingAlert, 'suppress_when_node_unreachable'>,
  event: EventRow,
  now: number,
  known?: Known,
): Promise<Suppression | undefined> {
  const silence = await coveringSilence(ctx, trx, event, now);
  if (silence !== undefined) return { reason: MAINTENANCE, silenceId: silence.id };
  if (
    alert.suppress_when_node_unreachable === 1 &&
    (await nodeUnreachableBehind(trx, event, known?.statesBehind?.get(event.resource_id)))
  )
    return { reason: NODE_UNREACHABLE, silenceId: null };
  return undefined;
}

type Webhook = { id: string; is_enabled: number };

function webhookOf(alert: WatchingAlert): Webhook | undefined {
  // A webhook or a channel: both are endpoints of the delivery engine.
  return alert.channel_type !== 'email' && alert.webhook_id !== null
    ? { id: alert.webhook_id, is_enabled: alert.webhook_enabled ?? 0 }
    : undefined;
}

/** The status a notification that goes out starts with: held while its webhook is disabled. */
function sendingStatus(webhook: Webhook | undefined): 'pending' | 'held' {
  return webhook === undefined || webhook.is_enabled === 1 ? 'pending' : 'held';
}

/**
 * Sends a stored notification: its webhook delivery (pending, or held), or its e-mail (alone or in a
 * digest). The delivery reads its webhook again as it is made: a notification whose webhook changed state
 * since the alert was read follows the delivery, and one whose webhook was deleted meanwhile (with its
 * alert) is removed. Returns the notification's status, or undefined when it was removed.
 */
async function dispatch(
  ctx: AppContext,
  trx: Executor,
  notification: { id: string; user_id: string; payload: string; occurred_at: number; status: string },
  webhook: Webhook | undefined,
  now: number,
): Promise<string | undefined> {
  if (webhook === undefined) {
    await sendByEmail(ctx, trx, notification);
    return notification.status;
  }
  const status = await startDelivery(ctx, trx, notification, webhook.id, now);
  if (status === undefined) {
    // Its webhook was deleted meanwhile: ended as the deletion ends what it had not sent.
    await cancelNotifications(trx, [notification.id]);
    return 'cancelled';
  }
  if (status !== notification.status) await setNotificationStatus(trx, notification.id, status);
  return status;
}

/**
 * The notification of an alert for an event, at most one (a check may run twice), with its delivery:
 * to the webhook (pending, or held while it is disabled) or to the owner's address through the outbox;
 * or none, the notification stored as suppressed, when a maintenance window covers the change or an
 * UNREACHABLE node is behind it. Runs in the transaction of the event or of the check.
 */
export async function createNotification(
  ctx: AppContext,
  trx: Executor,
  alert: WatchingAlert,
  event: EventRow,
  known?: Known,
): Promise<void> {
  const now = ctx.clock.now();
  const facts = await factsOf(ctx, trx, event, known);
  const webhook = webhookOf(alert);
  const suppressed = await suppressionOf(ctx, trx, alert, event, now, known);
  const row = {
    id: newId(now),
    user_id: alert.user_id,
    alert_id: alert.id,
    alert_name: alert.name,
    event_id: event.id,
    type: event.type,
    condition: event.condition,
    org_id: event.org_id,
    node_id: event.node_id,
    channel_type: alert.channel_type,
    webhook_id: alert.webhook_id,
    email_id: null,
    status: suppressed === undefined ? sendingStatus(webhook) : ('suppressed' as const),
    reason: suppressed?.reason ?? null,
    silence_id: suppressed?.silenceId ?? null,
    digest_id: null,
    payload: JSON.stringify(notificationPayload(facts, { id: alert.id, name: alert.name })),
    occurred_at: event.occurred_at,
    created_at: now,
  };
  if (!(await insertNotification(trx, row))) return;
  const status = suppressed === undefined ? await dispatch(ctx, trx, row, webhook, now) : row.status;
  if (status !== undefined) ctx.alertMetrics.notificationsEntered(trx, status, row.reason);
}

/**
 * A notification a maintenance window held back, sent now that the window is over — unless another
 * window or an UNREACHABLE node holds it back still (it is then suppressed for that reason instead).
 * Returns whether it went out.
 */
export async function sendHeldBack(
  ctx: AppContext,
  trx: Executor,
  notification: { id: string; user_id: string; payload: string; occurred_at: number },
  alert: WatchingAlert,
  event: EventRow,
): Promise<boolean> {
  const now = ctx.clock.now();
  const webhook = webhookOf(alert);
  const suppressed = await suppressionOf(ctx, trx, alert, event, now);
  const status = suppressed === undefined ? sendingStatus(webhook) : 'suppressed';
  const reason = suppressed?.reason ?? null;
  // A later window takes it over; otherwise the record of the window it waited in stays.
  await setHeldBackStatus(trx, notification.id, status, reason, suppressed?.silenceId ?? null);
  if (suppressed !== undefined) {
    ctx.alertMetrics.notificationsEntered(trx, status, reason);
    return false;
  }
  const sent = await dispatch(ctx, trx, { ...notification, status }, webhook, now);
  if (sent !== undefined) ctx.alertMetrics.notificationsEntered(trx, sent, reason);
  return sent !== undefined;
}
