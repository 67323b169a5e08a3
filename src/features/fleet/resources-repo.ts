import type { Expression } from 'kysely';
import { givenColumns, Prepared, rowSlots, rowsSlots, slot } from '../../db/prepared.js';
import type { Executor } from '../../db/types.js';
import type { StoredResource } from './reports/diff.js';

export type ResourceTable = 'tunnels' | 'services';

/** The column that holds a resource's state: a tunnel's `state`, a service's `status`. */
export const STATE_COLUMN = { tunnels: 'state', services: 'status' } as const;
/** The state a tunnel or service should be in; any other is down. */
export const GOOD_STATE = { tunnels: 'CONNECTED', services: 'HEALTHY' } as const;

export interface StoredWithSequence extends StoredResource {
  sequence: number;
  /** A tunnel's peer node's state, read with it (null without a peer). */
  peer_state?: string | null;
}

/**
 * A node's tunnels (with each one's peer's state) or services, as a report compares them with what it
 * says: read with the node (nodes/repo.ts lockNode).
 */
export function resourcesOfNodeQuery(db: Executor, table: ResourceTable, nodeId: Expression<string>) {
  if (table === 'services') {
    return db
      .selectFrom('services')
      .select(['id', 'key', 'name', 'sequence', 'status as state'])
      .where('node_id', '=', nodeId);
  }
  return db
    .selectFrom('tunnels')
    .leftJoin('nodes as peer', 'peer.id', 'tunnels.peer_node_id')
    .select([
      'tunnels.id',
      'tunnels.key',
      'tunnels.name',
      'tunnels.sequence',
      'tunnels.state',
      'tunnels.peer_node_id as peer',
      'peer.node_state as peer_state',
    ])
    .where('tunnels.node_id', '=', nodeId);
}

export interface NewResource {
  id: string;
  node_id: string;
  key: string;
  name: string;
  state: string;
  peer_node_id?: string | null;
  at: number;
}

export async function insertResources(
  db: Executor,
  table: ResourceTable,
  rows: readonly NewResource[],
): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((row) => ({ ...row, peer_node_id: row.peer_node_id ?? null }));
  await INSERT_RESOURCES.execute(db, { table, count: rows.length }, { rows: values });
}

/** Compiled once per table and number of rows. */
const INSERT_RESOURCES = new Prepared((db: Executor, shape: { table: ResourceTable; count: number }) => {
  const columns: (keyof NewResource)[] = ['id', 'node_id', 'key', 'name', 'state', 'at'];
  if (shape.table === 'tunnels') columns.push('peer_node_id');
  const values = rowsSlots<Required<NewResource>>('rows', columns, shape.count).map((row) => ({
    id: row.id,
    node_id: row.node_id,
    key: row.key,
    name: row.name,
    [STATE_COLUMN[shape.table]]: row.state,
    ...(shape.table === 'tunnels' ? { peer_node_id: row.peer_node_id } : {}),
    state_since: row.at,
    sequence: 1,
    created_at: row.at,
  }));
  return db.insertInto(shape.table).values(values);
});

export interface ResourceChanges {
  name: string;
  state?: string;
  sequence?: number;
  stateSince?: number;
  peerNodeId?: string | null;
}

export async function updateResource(
  db: Executor,
  table: ResourceTable,
  id: string,
  changes: ResourceChanges,
): Promise<void> {
  // A service has no peer.
  const given = givenColumns(changes).filter((key) => key !== 'peerNodeId' || table === 'tunnels');
  await UPDATE_RESOURCE.execute(db, { table, given }, { id, changes });
}

/** Compiled once per table and set of columns changed. */
const UPDATE_RESOURCE = new Prepared(
  (db: Executor, shape: { table: ResourceTable; given: (keyof ResourceChanges)[] }) => {
    const changes = rowSlots<Required<ResourceChanges>>('changes', shape.given);
    const column = { ...UPDATED_COLUMN, state: STATE_COLUMN[shape.table] };
    const set = Object.fromEntries(shape.given.map((key) => [column[key], changes[key]]));
    return db
      .updateTable(shape.table)
      .set(set as never)
      .where('id', '=', slot<string>('id'));
  },
);

const UPDATED_COLUMN = {
  name: 'name',
  sequence: 'sequence',
  stateSince: 'state_since',
  peerNodeId: 'peer_node_id',
} as const;

/** Counts again the node's tunnels or services away from their good state, after one was forgotten. */
export async function recountDown(db: Executor, table: ResourceTable, nodeId: string): Promise<void> {
  const down = db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('node_id', '=', nodeId)
    .where(STATE_COLUMN[table], '<>', GOOD_STATE[table]);
  await db
    .updateTable('nodes')
    .set(table === 'tunnels' ? { tunnels_down: down } : { services_down: down })
    .where('id', '=', nodeId)
    .execute();
}
