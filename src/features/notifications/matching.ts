import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { resolvesIncident } from '../channels/render.js';
import { changeIncident } from '../incidents/join.js';
import { isGrouped, isRecovery } from '../incidents/policy.js';
import { createNotification, type Known } from './create.js';
import { organizationChain } from './org-chain.js';
import { matchingSnapshot, type MatchingSnapshot } from './matching-snapshot.js';
import type { EventRow, WatchingAlert } from './repo.js';
import { inSpan } from '../../observability/tracing.js';

export const ALERT_CHECK = 'alerts.check';
export interface AlertCheck {
  alertId: string;
  eventId: string;
}

/** Whether the event is within the alert's organization scope and scopes (its type already selected). */
function inScope(alert: WatchingAlert, event: EventRow): boolean {
  if (alert.org_id !== event.org_id && alert.include_child !== 1) return false;
  if (alert.scope_node_id !== null && alert.scope_node_id !== event.node_id) return false;
  if (alert.scope_tunnel_id !== null && alert.scope_tunnel_id !== event.resource_id) return false;
  return alert.scope_service_id === null || alert.scope_service_id === event.resource_id;
}

/** Whether the alert matches the event: its type (already selected), condition, organization scope and scopes. */
export function alertMatches(alert: WatchingAlert, event: EventRow): boolean {
  if (!inScope(alert, event)) return false;
  if (alert.alert_me === null || alert.alert_me.split(',').includes(event.condition)) return true;
  // An incident a PagerDuty alert opened is closed by the resource's return to good, asked for or not. A
  // grouped alert's members recover on their own (notifyMatchingAlerts), and its PagerDuty incident with them.
  return alert.channel_type === 'pagerduty' && !isGrouped(alert) && resolvesIncident(event.condition);
}

/**
 * The alerts an event may notify: those of its type; and for a node's return to ALIVE also the PagerDuty
 * alerts on its headless time, whose incident that return closes (their dedup key is the alert and the node).
 */
function candidatesFor(snapshot: MatchingSnapshot, event: EventRow, orgIds: string[]): WatchingAlert[] {
  const ofType = (type: string) =>
    (snapshot.alertsByType.get(type) ?? []).filter((alert) => orgIds.includes(alert.org_id));
  if (event.type !== 'NODE_STATE_CHANGE' || event.condition !== 'ALIVE') return ofType(event.type);
  const headless = ofType('HEADLESS_EXPIRY').filter((alert) => alert.channel_type === 'pagerduty');
  return [...ofType(event.type), ...headless];
}

/**
 * Matches new events to alerts, in the transaction that stores them: an alert without a duration gets
 * its notification now; one with a duration gets a check at `occurred_at + duration`, which notifies
 * only if the resource has not changed since.
 */
export async function notifyMatchingAlerts(
  ctx: AppContext,
  trx: Executor,
  events: readonly EventRow[],
  known?: Known,
): Promise<void> {
  if (events.length === 0) return;
  const snapshot = await matchingSnapshot(ctx, trx);
  for (const event of events) {
    await inSpan('edgewatch.event', eventAttributes(event), () =>
      notifyForEvent(ctx, trx, snapshot, event, known),
    );
  }
}

/** The span attributes of an event, and of what it makes. */
export function eventAttributes(event: EventRow) {
  return {
    'edgewatch.event.id': event.id,
    'edgewatch.event.type': event.type,
    'edgewatch.event.condition': event.condition,
    'edgewatch.node.id': event.node_id,
    'edgewatch.resource.id': event.resource_id,
  };
}

async function notifyForEvent(
  ctx: AppContext,
  trx: Executor,
  snapshot: MatchingSnapshot,
  event: EventRow,
  known: Known | undefined,
): Promise<void> {
  const chain = await organizationChain(ctx, trx, event.org_id);
  const candidates = candidatesFor(
    snapshot,
    event,
    chain.map((org) => org.id),
  );
  for (const alert of candidates) {
    if (!alertMatches(alert, event)) {
      // A grouped alert's member recovers on its return to good, whether or not the alert asks to be told.
      if (isGrouped(alert) && alert.type === event.type && isRecovery(event) && inScope(alert, event))
        await changeIncident(ctx, trx, alert, event, undefined);
      continue;
    }
    const minutes = alert.duration_minutes ?? 0;
    if (minutes > 0) {
      const check: AlertCheck = { alertId: alert.id, eventId: event.id };
      await ctx.jobs.enqueue(trx, ALERT_CHECK, check, {
        key: `${alert.id}:${event.id}`,
        runAt: event.occurred_at + minutes * 60_000,
      });
    } else {
      await createNotification(ctx, trx, alert, event, known);
    }
  }
}
