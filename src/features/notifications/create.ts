import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import { notificationPayload, type EventFacts } from './payload.js';
import type { NotificationType, ResourceKind } from './types.js';
import { readWebhookForDelivery } from '../deliveries/repo.js';
import { startDelivery } from '../deliveries/start.js';
import { coveringSilence } from '../silences/coverage.js';
import { sendByEmail } from './email-storm.js';
import { organizationChain } from './org-chain.js';
import { NODE_UNREACHABLE, nodeUnreachableBehind } from './suppression.js';
import {
  insertNotification,
  nodeName,
  setHeldBackStatus,
  type EventRow,
  type WatchingAlert,
} from './repo.js';

/** Node names the caller already knows (by id), so the notification does not read them again. */
export type KnownNodes = ReadonlyMap<string, string>;

async function nodeNameOf(trx: Executor, event: EventRow, known: KnownNodes | undefined): Promise<string> {
  if (event.resource_kind === 'node') return event.resource_name;
  return known?.get(event.node_id) ?? nodeName(trx, event.node_id);
}

async function factsOf(
  ctx: AppContext,
  trx: Executor,
  event: EventRow,
  known: KnownNodes | undefined,
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
): Promise<Suppression | undefined> {
  const silence = await coveringSilence(ctx, trx, event, now);
  if (silence !== undefined) return { reason: MAINTENANCE, silenceId: silence.id };
  if (alert.suppress_when_node_unreachable === 1 && (await nodeUnreachableBehind(trx, event)))
    return { reason: NODE_UNREACHABLE, silenceId: null };
  return undefined;
}

/**
 * Where a notification that goes out is sent: by e-mail, or to its webhook as it is now (read as its
 * delivery is made, see readWebhookForDelivery); `gone` when the webhook was deleted meanwhile, with the
 * alert: then nothing is sent.
 */
type Destination = { email: true } | { webhookId: string; enabled: boolean } | 'gone';

async function destinationOf(trx: Executor, alert: WatchingAlert): Promise<Destination> {
  if (alert.channel_type !== 'webhook' || alert.webhook_id === null) return { email: true };
  const webhook = await readWebhookForDelivery(trx, alert.webhook_id);
  return webhook === undefined ? 'gone' : { webhookId: alert.webhook_id, enabled: webhook.is_enabled === 1 };
}

/** The status a notification that goes out starts with: held while its webhook is disabled. */
function sendingStatus(destination: Exclude<Destination, 'gone'>): 'pending' | 'held' {
  return 'webhookId' in destination && !destination.enabled ? 'held' : 'pending';
}

/** Sends a stored notification: its webhook delivery (pending, or held), or its e-mail (alone or in a digest). */
async function dispatch(
  ctx: AppContext,
  trx: Executor,
  notification: { id: string; user_id: string; payload: string },
  destination: Exclude<Destination, 'gone'>,
  now: number,
): Promise<void> {
  if (!('webhookId' in destination)) return sendByEmail(ctx, trx, notification);
  await startDelivery(ctx, trx, notification.id, destination.webhookId, sendingStatus(destination), now);
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
  known?: KnownNodes,
): Promise<void> {
  const now = ctx.clock.now();
  const facts = await factsOf(ctx, trx, event, known);
  const suppressed = await suppressionOf(ctx, trx, alert, event, now);
  const destination = await destinationOf(trx, alert);
  if (destination === 'gone') return;
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
    status: suppressed === undefined ? sendingStatus(destination) : ('suppressed' as const),
    reason: suppressed?.reason ?? null,
    silence_id: suppressed?.silenceId ?? null,
    digest_id: null,
    payload: JSON.stringify(notificationPayload(facts, { id: alert.id, name: alert.name })),
    occurred_at: event.occurred_at,
    created_at: now,
  };
  if (!(await insertNotification(trx, row))) return;
  ctx.alertMetrics.notificationsEntered(trx, row.status, row.reason);
  if (suppressed === undefined) await dispatch(ctx, trx, row, destination, now);
}

/**
 * A notification a maintenance window held back, sent now that the window is over — unless another
 * window or an UNREACHABLE node holds it back still (it is then suppressed for that reason instead).
 * Returns whether it went out.
 */
export async function sendHeldBack(
  ctx: AppContext,
  trx: Executor,
  notification: { id: string; user_id: string; payload: string },
  alert: WatchingAlert,
  event: EventRow,
): Promise<boolean> {
  const now = ctx.clock.now();
  const destination = await destinationOf(trx, alert);
  if (destination === 'gone') return false;
  const suppressed = await suppressionOf(ctx, trx, alert, event, now);
  const status = suppressed === undefined ? sendingStatus(destination) : 'suppressed';
  const reason = suppressed?.reason ?? null;
  // A later window takes it over; otherwise the record of the window it waited in stays.
  await setHeldBackStatus(trx, notification.id, status, reason, suppressed?.silenceId ?? null);
  ctx.alertMetrics.notificationsEntered(trx, status, reason);
  if (suppressed !== undefined) return false;
  await dispatch(ctx, trx, notification, destination, now);
  return true;
}
