import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import type { EventRow, WatchingAlert } from '../notifications/repo.js';
import { writeMessage } from './message.js';
import { groupByOf, groupKeyOf, isRecovery, memberKeyOf, timingOf } from './policy.js';
import * as repo from './repo.js';
import { incidentColumns, incidentOf, memberOf, memberRow } from './state.js';
import { fired, open, recovered } from './timeline.js';

/**
 * The event's side of an incident, in the event's transaction: a member fires or recovers, the incident
 * opens (with its first message, made at once) or changes, and its next due time is written with the
 * flush job that keeps it. Nothing here waits for a timer in memory.
 */

export const INCIDENT_FLUSH = 'incidents.flush';
export interface IncidentFlush {
  incidentId: string;
}

/** The incident's flush, due at `dueAt`: the waiting job is moved there, or one is made. */
export async function scheduleFlush(
  ctx: AppContext,
  trx: Executor,
  incidentId: string,
  dueAt: number | null,
): Promise<void> {
  // A resolved incident has nothing due: a job still waiting finds that and ends.
  if (dueAt === null) return;
  if (await ctx.jobs.reschedule(trx, INCIDENT_FLUSH, incidentId, dueAt)) return;
  await ctx.jobs.enqueue(trx, INCIDENT_FLUSH, { incidentId } satisfies IncidentFlush, {
    key: incidentId,
    runAt: dueAt,
  });
}

/** The notification that brought the change; none for a recovery the alert does not ask to be told of. */
type Brought = { id: string; condition: string } | undefined;

async function openIncident(
  ctx: AppContext,
  trx: Executor,
  alert: WatchingAlert,
  event: EventRow,
  notification: { id: string; condition: string },
): Promise<boolean> {
  const now = ctx.clock.now();
  const step = open(memberKeyOf(event), now, timingOf(alert));
  const row: repo.IncidentRow = {
    id: newId(now),
    alert_id: alert.id,
    user_id: alert.user_id,
    group_key: groupKeyOf(alert, event),
    org_id: event.org_id,
    node_id: groupByOf(alert) === 'node' ? event.node_id : null,
    type: alert.type,
    opened_at: now,
    behind_unreachable: 0,
    ...incidentColumns(step.incident),
  };
  // Another event opened it first: this one joins it instead.
  if (!(await repo.insertIncident(trx, row))) return false;
  const latest = { notificationId: notification.id, condition: notification.condition };
  await repo.putMember(trx, memberRow(row.id, step.members[0]!, latest));
  await repo.setNotificationIncident(trx, notification.id, row.id);
  const rows = new Map([
    [step.members[0]!.key, { notification_id: notification.id, condition: notification.condition }],
  ]);
  await writeMessage(ctx, trx, row, alert, step.message!, rows);
  await scheduleFlush(ctx, trx, row.id, step.incident.dueAt);
  return true;
}

/**
 * The event changes its member of the alert's firing incident for its group key: fires it (opening the
 * incident if none is firing) or recovers it. Returns false when there is nothing to change: a recovery
 * with no member firing. The notification, when there is one, is stored already and names the incident.
 */
export async function changeIncident(
  ctx: AppContext,
  trx: Executor,
  alert: WatchingAlert,
  event: EventRow,
  notification: Brought,
): Promise<boolean> {
  const timing = timingOf(alert);
  const recovery = timing.recovers && isRecovery(event);
  const groupKey = groupKeyOf(alert, event);
  let row = await repo.lockFiringIncident(trx, alert.id, groupKey);
  if (row === undefined) {
    if (recovery || notification === undefined) return false;
    if (await openIncident(ctx, trx, alert, event, notification)) return true;
    row = await repo.lockFiringIncident(trx, alert.id, groupKey);
    if (row === undefined)
      throw new Error(`the firing incident of alert ${alert.id} for ${groupKey} vanished`);
  }
  const now = ctx.clock.now();
  const key = memberKeyOf(event);
  const knownRow = await repo.findMember(trx, row.id, key);
  const known = knownRow === undefined ? undefined : memberOf(knownRow);
  const before = incidentOf(row);
  const change = recovery ? recovered(before, known, now, timing) : fired(before, known, key, now, timing);
  if (change === undefined) return false;
  const latest =
    notification === undefined
      ? { notificationId: knownRow!.notification_id, condition: event.condition }
      : { notificationId: notification.id, condition: notification.condition };
  await repo.putMember(trx, memberRow(row.id, change.member, latest));
  if (change.incident !== before) await repo.updateIncident(trx, row.id, incidentColumns(change.incident));
  if (notification !== undefined) await repo.setNotificationIncident(trx, notification.id, row.id);
  if (change.incident.dueAt !== before.dueAt) await scheduleFlush(ctx, trx, row.id, change.incident.dueAt);
  return true;
}

/**
 * A tunnel's or service's change behind an UNREACHABLE node, folded into the incident firing for its
 * group key: counted, not listed. Returns false when no incident is firing there.
 */
export async function foldIntoIncident(
  trx: Executor,
  alert: WatchingAlert,
  event: EventRow,
  notificationId: string,
): Promise<boolean> {
  const row = await repo.lockFiringIncident(trx, alert.id, groupKeyOf(alert, event));
  if (row === undefined) return false;
  await repo.countBehindUnreachable(trx, row.id);
  await repo.setNotificationIncident(trx, notificationId, row.id);
  return true;
}
