import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import type { Span } from '@opentelemetry/api';
import { newId } from '../../lib/ids.js';
import { inSpan } from '../../observability/tracing.js';
import { notificationPayload, type EventFacts } from './payload.js';
import type { NotificationType, ResourceKind } from './types.js';
import { changeIncident, foldIntoIncident } from '../incidents/join.js';
import { isGrouped } from '../incidents/policy.js';
import { coveringSilence } from '../silences/coverage.js';
import { sendingStatus, sendNotification, webhookOf } from './send.js';
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

/** Why a grouped alert's return to good is stored without being sent: it had no member to recover. */
export const NOTHING_FIRING = 'nothing_firing';

/**
 * Sends a stored notification: through its incident for a grouped alert (docs/decisions/0008-incidents.md),
 * else on its own. A grouped alert's return to good with no member firing tells nothing (a node's first
 * report, say): it is stored suppressed. Returns its status and why, or undefined when it was removed (its
 * webhook was deleted meanwhile).
 */
async function sendOrGroup(
  ctx: AppContext,
  trx: Executor,
  alert: WatchingAlert,
  event: EventRow,
  notification: { id: string; user_id: string; payload: string; occurred_at: number; status: string },
  now: number,
): Promise<{ status: string; reason: string | null } | undefined> {
  if (isGrouped(alert)) {
    if (await changeIncident(ctx, trx, alert, event, { ...notification, condition: event.condition }))
      return { status: 'grouped', reason: null };
    await setHeldBackStatus(trx, notification.id, 'suppressed', NOTHING_FIRING, null);
    return { status: 'suppressed', reason: NOTHING_FIRING };
  }
  const webhook = webhookOf(alert);
  const sent = await sendNotification(ctx, trx, notification, webhook, now);
  return sent === undefined ? undefined : { status: sent, reason: null };
}

/**
 * Whether a notification is held back, as `suppressionOf` says. A grouped alert always folds a tunnel's
 * or service's change behind an UNREACHABLE node into that node.
 */
function holdingBack(
  ctx: AppContext,
  trx: Executor,
  alert: WatchingAlert,
  event: EventRow,
  now: number,
  known?: Known,
) {
  const folds = isGrouped(alert) ? { suppress_when_node_unreachable: 1 } : alert;
  return suppressionOf(ctx, trx, folds, event, now, known);
}

/**
 * The notification of an alert for an event, at most one (a check may run twice), sent: through its
 * incident for a grouped alert, else with its delivery to the webhook (pending, or held while it is
 * disabled) or to the owner's address through the outbox. Or none, the notification stored as suppressed,
 * when a maintenance window covers the change or an UNREACHABLE node is behind it; a grouped alert's
 * incident counts the latter (`behind_unreachable`). Runs in the transaction of the event or of the check.
 */
export function createNotification(
  ctx: AppContext,
  trx: Executor,
  alert: WatchingAlert,
  event: EventRow,
  known?: Known,
): Promise<void> {
  const attributes = { 'edgewatch.alert.id': alert.id, 'edgewatch.channel': alert.channel_type };
  return inSpan('edgewatch.notification', attributes, (span) =>
    makeNotification(ctx, trx, alert, event, known, span),
  );
}

async function makeNotification(
  ctx: AppContext,
  trx: Executor,
  alert: WatchingAlert,
  event: EventRow,
  known: Known | undefined,
  span: Span | undefined,
): Promise<void> {
  const now = ctx.clock.now();
  const facts = await factsOf(ctx, trx, event, known);
  const suppressed = await holdingBack(ctx, trx, alert, event, now, known);
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
    status:
      suppressed !== undefined
        ? ('suppressed' as const)
        : isGrouped(alert)
          ? ('grouped' as const)
          : sendingStatus(webhookOf(alert)),
    reason: suppressed?.reason ?? null,
    silence_id: suppressed?.silenceId ?? null,
    incident_id: null,
    incident_sequence: null,
    payload: JSON.stringify(notificationPayload(facts, { id: alert.id, name: alert.name })),
    occurred_at: event.occurred_at,
    created_at: now,
  };
  if (!(await insertNotification(trx, row))) return;
  let status: string | undefined = row.status;
  let reason: string | null = row.reason;
  if (suppressed === undefined) {
    const outcome = await sendOrGroup(ctx, trx, alert, event, row, now);
    status = outcome?.status;
    reason = outcome?.reason ?? null;
  } else if (
    suppressed.reason === NODE_UNREACHABLE &&
    isGrouped(alert) &&
    (await foldIntoIncident(trx, alert, event, row.id))
  ) {
    await setHeldBackStatus(trx, row.id, 'grouped', NODE_UNREACHABLE, null);
    status = 'grouped';
  }
  span?.setAttributes({
    'edgewatch.notification.id': row.id,
    'edgewatch.notification.status': status ?? 'removed',
  });
  if (status !== undefined) ctx.alertMetrics.notificationsEntered(trx, status, reason);
}

/**
 * A notification a maintenance window held back, sent now that the window is over (through its incident
 * for a grouped alert) — unless another window or an UNREACHABLE node holds it back still (it is then
 * suppressed for that reason instead). Returns whether it went out.
 */
export async function sendHeldBack(
  ctx: AppContext,
  trx: Executor,
  notification: { id: string; user_id: string; payload: string; occurred_at: number },
  alert: WatchingAlert,
  event: EventRow,
): Promise<boolean> {
  const now = ctx.clock.now();
  const suppressed = await suppressionOf(ctx, trx, alert, event, now);
  const status =
    suppressed !== undefined ? 'suppressed' : isGrouped(alert) ? 'grouped' : sendingStatus(webhookOf(alert));
  const reason = suppressed?.reason ?? null;
  // A later window takes it over; otherwise the record of the window it waited in stays.
  await setHeldBackStatus(trx, notification.id, status, reason, suppressed?.silenceId ?? null);
  if (suppressed !== undefined) {
    ctx.alertMetrics.notificationsEntered(trx, status, reason);
    return false;
  }
  const sent = await sendOrGroup(ctx, trx, alert, event, { ...notification, status }, now);
  if (sent !== undefined) ctx.alertMetrics.notificationsEntered(trx, sent.status, sent.reason ?? reason);
  return sent !== undefined && sent.status !== 'suppressed';
}
