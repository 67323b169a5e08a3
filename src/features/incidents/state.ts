import type { IncidentRow, IncidentState, MemberRow } from './repo.js';
import type { Incident, Member } from './timeline.js';

/** Incidents and members as rows and as the timeline (timeline.ts) reasons about them. */

export function incidentOf(row: IncidentRow): Incident {
  return {
    status: row.status,
    openedAt: Number(row.opened_at),
    resolvedAt: row.resolved_at === null ? null : Number(row.resolved_at),
    sequence: row.sequence,
    lastMessageAt: Number(row.last_message_at),
    lastChangeAt: Number(row.last_change_at),
    dueAt: row.due_at === null ? null : Number(row.due_at),
    flaps: row.flaps,
    firing: row.firing,
  };
}

/** The columns the timeline owns. */
export function incidentColumns(incident: Incident): IncidentState {
  return {
    status: incident.status,
    resolved_at: incident.resolvedAt,
    sequence: incident.sequence,
    last_message_at: incident.lastMessageAt,
    last_change_at: incident.lastChangeAt,
    due_at: incident.dueAt,
    flaps: incident.flaps,
    firing: incident.firing,
  };
}

export function memberOf(row: MemberRow): Member {
  return {
    key: row.member_key,
    firing: row.firing === 1,
    since: Number(row.since),
    change: row.change,
    recoveredAt: row.recovered_at === null ? null : Number(row.recovered_at),
    flaps: row.flaps,
    announced: row.announced === 1,
  };
}

/** A member's row: the timeline's state, with the notification and condition of its latest event. */
export function memberRow(
  incidentId: string,
  member: Member,
  latest: { notificationId: string; condition: string },
): MemberRow {
  return {
    incident_id: incidentId,
    member_key: member.key,
    notification_id: latest.notificationId,
    condition: latest.condition,
    firing: member.firing ? 1 : 0,
    since: member.since,
    change: member.change,
    recovered_at: member.recoveredAt,
    flaps: member.flaps,
    announced: member.announced ? 1 : 0,
  };
}
