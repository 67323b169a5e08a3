import { sql } from 'kysely';
import { inChunks } from '../../db/chunks.js';
import { isPostgres } from '../../db/connect.js';
import type { Executor, IncidentMembersTable, IncidentsTable } from '../../db/types.js';

/**
 * The queries of incidents and their members. Lock order (docs/deliveries.md#locks): an incident's row is
 * locked before anything a message writes (its notification, its delivery or e-mail), by the event that
 * changes it and by its flush alike.
 */

export type IncidentRow = IncidentsTable;
export type MemberRow = IncidentMembersTable;

/** The alert's firing incident for the key, locked until the transaction ends (PostgreSQL). */
export async function lockFiringIncident(
  db: Executor,
  alertId: string,
  groupKey: string,
): Promise<IncidentRow | undefined> {
  let query = db
    .selectFrom('incidents')
    .selectAll()
    .where('alert_id', '=', alertId)
    .where('group_key', '=', groupKey)
    // A literal, as in the partial index's predicate: SQLite uses the index only then, else it scans.
    .where('status', '=', sql.lit('firing'));
  if (isPostgres(db)) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** The incident, locked until the transaction ends (PostgreSQL): its flush holds it. */
export async function lockIncident(db: Executor, id: string): Promise<IncidentRow | undefined> {
  let query = db.selectFrom('incidents').selectAll().where('id', '=', id);
  if (isPostgres(db)) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * Inserts the incident unless the alert has a firing one for the key already (another event opened it
 * meanwhile); whether it was inserted.
 */
export async function insertIncident(db: Executor, row: IncidentRow): Promise<boolean> {
  const result = await db
    .insertInto('incidents')
    .values(row)
    .onConflict((oc) =>
      // The target names the partial index by its predicate, as a literal: a parameter would not match it.
      oc.columns(['alert_id', 'group_key']).where('status', '=', sql.lit('firing')).doNothing(),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function updateIncident(
  db: Executor,
  id: string,
  changes: Partial<Omit<IncidentRow, 'id' | 'alert_id' | 'user_id'>>,
): Promise<void> {
  await db.updateTable('incidents').set(changes).where('id', '=', id).execute();
}

export async function findMember(
  db: Executor,
  incidentId: string,
  key: string,
): Promise<MemberRow | undefined> {
  return db
    .selectFrom('incident_members')
    .selectAll()
    .where('incident_id', '=', incidentId)
    .where('member_key', '=', key)
    .executeTakeFirst();
}

export async function allMembers(db: Executor, incidentId: string): Promise<MemberRow[]> {
  return db.selectFrom('incident_members').selectAll().where('incident_id', '=', incidentId).execute();
}

/** Writes the member as given, its row made or replaced. */
export async function putMember(db: Executor, row: MemberRow): Promise<void> {
  const { notification_id, condition, firing, since, change, recovered_at, flaps, announced } = row;
  const state = { notification_id, condition, firing, since, change, recovered_at, flaps, announced };
  await db
    .insertInto('incident_members')
    .values(row)
    .onConflict((oc) => oc.columns(['incident_id', 'member_key']).doUpdateSet(state))
    .execute();
}

/** Members dropped after a message: told recoveries past their flap window, or all at the resolve. */
export async function deleteMembers(
  db: Executor,
  incidentId: string,
  keys: readonly string[],
): Promise<void> {
  await inChunks(keys, async (part) => {
    const result = await db
      .deleteFrom('incident_members')
      .where('incident_id', '=', incidentId)
      .where('member_key', 'in', part)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  });
}

/** The same change to many members (a flush marks them told), a few statements for thousands. */
export async function updateMembers(
  db: Executor,
  incidentId: string,
  keys: readonly string[],
  changes: Partial<Pick<MemberRow, 'change' | 'flaps' | 'announced'>>,
): Promise<void> {
  await inChunks(keys, async (part) => {
    const result = await db
      .updateTable('incident_members')
      .set(changes)
      .where('incident_id', '=', incidentId)
      .where('member_key', 'in', part)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  });
}

/** The bodies of the members' latest notifications, by notification id. */
export async function memberPayloads(
  db: Executor,
  notificationIds: readonly string[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  await inChunks(notificationIds, async (part) => {
    const rows = await db
      .selectFrom('notifications')
      .select(['id', 'payload'])
      .where('id', 'in', part)
      .execute();
    for (const row of rows) found.set(row.id, row.payload);
    return rows.length;
  });
  return found;
}

/** The notification joined the incident. */
export async function setNotificationIncident(
  db: Executor,
  notificationId: string,
  incidentId: string,
): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ incident_id: incidentId })
    .where('id', '=', notificationId)
    .execute();
}

/** Counts a tunnel's or service's change folded into its UNREACHABLE node. */
export async function countBehindUnreachable(db: Executor, incidentId: string): Promise<void> {
  await db
    .updateTable('incidents')
    .set((eb) => ({ behind_unreachable: eb('behind_unreachable', '+', 1) }))
    .where('id', '=', incidentId)
    .execute();
}
