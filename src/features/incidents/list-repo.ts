import { sql } from 'kysely';
import { paginate } from '../../db/paginate.js';
import type { DeliveriesTable, Executor, IncidentsTable, NotificationsTable } from '../../db/types.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { subtreeIds } from '../orgs/repo.js';

/**
 * The read side of incidents for the API (GET /api/v2/incident and its item and members): lists and reads
 * only, no lock and no write. The engine's queries are in repo.ts.
 */

export type IncidentListRow = IncidentsTable & {
  /** The alert's name now (an alert's incidents go with the alert). */
  alert_name: string;
};

export interface IncidentFilters {
  /** The owner's incidents (those of their alerts); undefined: everyone's, which orgIds then bound. */
  userId?: string;
  /** The organization and those below it. */
  orgId?: string;
  /** Only these organizations (listed, not a subquery: PostgreSQL then reads them by index). */
  orgIds?: readonly string[];
  alertId?: string;
  status?: IncidentsTable['status'];
}

function incidentsWithAlert(db: Executor) {
  return db
    .selectFrom('incidents')
    .innerJoin('alerts', 'alerts.id', 'incidents.alert_id')
    .selectAll('incidents')
    .select('alerts.name as alert_name');
}

/** A page of incidents: the firing ones first, then newest first (opened_at, then id) within each status. */
export async function listIncidents(
  db: Executor,
  filters: IncidentFilters,
  page: PageRequest,
): Promise<Page<IncidentListRow>> {
  let query = incidentsWithAlert(db);
  if (filters.userId !== undefined) query = query.where('incidents.user_id', '=', filters.userId);
  if (filters.orgId !== undefined)
    query = query.where('incidents.org_id', 'in', subtreeIds(db, filters.orgId));
  if (filters.orgIds !== undefined) {
    // An empty list matches nothing; `in ()` is not SQL.
    if (filters.orgIds.length === 0) return { total_count: 0, results: [] };
    query = query.where('incidents.org_id', 'in', filters.orgIds);
  }
  if (filters.alertId !== undefined) query = query.where('incidents.alert_id', '=', filters.alertId);
  if (filters.status !== undefined) query = query.where('incidents.status', '=', filters.status);
  const ordered = query
    .orderBy(sql`case when incidents.status = 'firing' then 0 else 1 end`)
    .orderBy('incidents.opened_at', 'desc')
    .orderBy('incidents.id', 'desc');
  return paginate(db, ordered, page);
}

export async function findIncident(db: Executor, id: string): Promise<IncidentListRow | undefined> {
  return incidentsWithAlert(db).where('incidents.id', '=', id).executeTakeFirst();
}

/** How many members each incident has now, by incident id (none: absent). */
export async function memberCounts(
  db: Executor,
  incidentIds: readonly string[],
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (incidentIds.length === 0) return counts;
  const rows = await db
    .selectFrom('incident_members')
    .select(['incident_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('incident_id', 'in', [...new Set(incidentIds)])
    .groupBy('incident_id')
    .execute();
  for (const row of rows) counts.set(row.incident_id, Number(row.n));
  return counts;
}

/**
 * For each incident given, the body of the newest notification that joined it: the names its node and
 * organization had then, for a node or organization that is gone since.
 */
export async function lastJoinedPayloads(
  db: Executor,
  incidentIds: readonly string[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const incidentId of new Set(incidentIds)) {
    const row = await db
      .selectFrom('notifications')
      .select('payload')
      .where('incident_id', '=', incidentId)
      .where('incident_sequence', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (row !== undefined) found.set(incidentId, row.payload);
  }
  return found;
}

export type MessageRow = Pick<
  NotificationsTable,
  'id' | 'incident_sequence' | 'condition' | 'status' | 'created_at' | 'channel_type'
>;

/** The incident's messages (its notifications with a sequence), oldest first. */
export async function messagesOf(db: Executor, incidentId: string): Promise<MessageRow[]> {
  return db
    .selectFrom('notifications')
    .select(['id', 'incident_sequence', 'condition', 'status', 'created_at', 'channel_type'])
    .where('incident_id', '=', incidentId)
    .where('incident_sequence', 'is not', null)
    .orderBy('incident_sequence')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export type MessageDeliveryRow = Pick<
  DeliveriesTable,
  'id' | 'notification_id' | 'webhook_id' | 'status' | 'attempts' | 'delivered_at'
>;

/** The webhook deliveries of the messages given, oldest first. */
export async function deliveriesOfMessages(
  db: Executor,
  messageIds: readonly string[],
): Promise<MessageDeliveryRow[]> {
  if (messageIds.length === 0) return [];
  return db
    .selectFrom('deliveries')
    .select(['id', 'notification_id', 'webhook_id', 'status', 'attempts', 'delivered_at'])
    .where('notification_id', 'in', [...messageIds])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export interface MemberListRow {
  member_key: string;
  condition: string;
  firing: number;
  since: number;
  change: 'new' | 'recovered' | null;
  flaps: number;
  /** The body of the member's latest notification; null when it is gone. */
  payload: string | null;
}

/**
 * A page of the incident's members: the changed ones first (new, then recovered), then the rest, each by
 * since (oldest first), then by key.
 */
export async function listMembers(
  db: Executor,
  incidentId: string,
  page: PageRequest,
): Promise<Page<MemberListRow>> {
  const query = db
    .selectFrom('incident_members')
    .leftJoin('notifications', 'notifications.id', 'incident_members.notification_id')
    .select([
      'incident_members.member_key',
      'incident_members.condition',
      'incident_members.firing',
      'incident_members.since',
      'incident_members.change',
      'incident_members.flaps',
      'notifications.payload',
    ])
    .where('incident_members.incident_id', '=', incidentId)
    .orderBy(
      sql`case when incident_members.change = 'new' then 0 when incident_members.change = 'recovered' then 1 else 2 end`,
    )
    .orderBy('incident_members.since')
    .orderBy('incident_members.member_key');
  return paginate(db, query, page);
}
