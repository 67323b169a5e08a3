import { sql } from 'kysely';
import { inChunks } from '../../db/chunks.js';
import { isPostgres } from '../../db/connect.js';
import { allColumns, Prepared, rowSlots, slot } from '../../db/prepared.js';
import type { Executor, IncidentMembersTable, IncidentsTable } from '../../db/types.js';

/**
 * The queries of incidents and their members. Lock order (docs/deliveries.md#locks): an incident's row is
 * locked before anything a message writes (its notification, its delivery or e-mail), by the event that
 * changes it and by its flush alike.
 */

export type IncidentRow = IncidentsTable;
export type MemberRow = IncidentMembersTable;

// The statements an event runs for its incident, built once (db/prepared.ts): in a mass outage they run for
// every node, and building them cost more than running them.
const LOCK_FIRING = new Prepared((db: Executor) => {
  const query = db
    .selectFrom('incidents')
    .selectAll()
    .where('alert_id', '=', slot<string>('alertId'))
    .where('group_key', '=', slot<string>('groupKey'))
    // A literal, as in the partial index's predicate: SQLite uses the index only then, else it scans.
    .where('status', '=', sql.lit('firing'));
  return isPostgres(db) ? query.forUpdate() : query;
});

/** The alert's firing incident for the key, locked until the transaction ends (PostgreSQL). */
export async function lockFiringIncident(
  db: Executor,
  alertId: string,
  groupKey: string,
): Promise<IncidentRow | undefined> {
  const [row] = await LOCK_FIRING.execute(db, {}, { alertId, groupKey });
  return row;
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

/** The columns of an incident that its timeline (timeline.ts) changes. */
export type IncidentState = Pick<
  IncidentRow,
  'status' | 'resolved_at' | 'sequence' | 'last_message_at' | 'last_change_at' | 'due_at' | 'flaps' | 'firing'
>;
const STATE_COLUMNS = allColumns<IncidentState>({
  ...{ status: true, resolved_at: true, sequence: true, last_message_at: true, last_change_at: true },
  ...{ due_at: true, flaps: true, firing: true },
});

const UPDATE_STATE = new Prepared((db: Executor) =>
  db
    .updateTable('incidents')
    .set(rowSlots<IncidentState>('state', STATE_COLUMNS))
    .where('id', '=', slot<string>('id')),
);

export async function updateIncident(db: Executor, id: string, state: IncidentState): Promise<void> {
  await UPDATE_STATE.run(db, {}, { id, state });
}

const FIND_MEMBER = new Prepared((db: Executor) =>
  db
    .selectFrom('incident_members')
    .selectAll()
    .where('incident_id', '=', slot<string>('incidentId'))
    .where('member_key', '=', slot<string>('key')),
);

export async function findMember(
  db: Executor,
  incidentId: string,
  key: string,
): Promise<MemberRow | undefined> {
  const [row] = await FIND_MEMBER.execute(db, {}, { incidentId, key });
  return row;
}

export async function allMembers(db: Executor, incidentId: string): Promise<MemberRow[]> {
  return db.selectFrom('incident_members').selectAll().where('incident_id', '=', incidentId).execute();
}

const MEMBER_COLUMNS = allColumns<MemberRow>({
  ...{ incident_id: true, member_key: true, notification_id: true, condition: true, firing: true },
  ...{ since: true, change: true, recovered_at: true, flaps: true, announced: true },
});
const MEMBER_STATE = MEMBER_COLUMNS.filter((column) => column !== 'incident_id' && column !== 'member_key');

const PUT_MEMBER = new Prepared((db: Executor) =>
  db
    .insertInto('incident_members')
    .values(rowSlots<MemberRow>('row', MEMBER_COLUMNS))
    .onConflict((oc) =>
      oc
        .columns(['incident_id', 'member_key'])
        .doUpdateSet(
          Object.fromEntries(MEMBER_STATE.map((column) => [column, slot('row', undefined, column)])),
        ),
    ),
);

/** Writes the member as given, its row made or replaced. */
export async function putMember(db: Executor, row: MemberRow): Promise<void> {
  await PUT_MEMBER.run(db, {}, { row });
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

const SET_NOTIFICATION_INCIDENT = new Prepared((db: Executor) =>
  db
    .updateTable('notifications')
    .set({ incident_id: slot<string>('incidentId') })
    .where('id', '=', slot<string>('notificationId')),
);

/** The notification joined the incident. */
export async function setNotificationIncident(
  db: Executor,
  notificationId: string,
  incidentId: string,
): Promise<void> {
  await SET_NOTIFICATION_INCIDENT.run(db, {}, { notificationId, incidentId });
}

/** Counts a tunnel's or service's change folded into its UNREACHABLE node. */
export async function countBehindUnreachable(db: Executor, incidentId: string): Promise<void> {
  await db
    .updateTable('incidents')
    .set((eb) => ({ behind_unreachable: eb('behind_unreachable', '+', 1) }))
    .where('id', '=', incidentId)
    .execute();
}
