import type { Executor } from '../../db/types.js';
import type { StoredResource } from './reports/diff.js';

export type ResourceTable = 'tunnels' | 'services';

/** The column that holds a resource's state: a tunnel's `state`, a service's `status`. */
export const STATE_COLUMN = { tunnels: 'state', services: 'status' } as const;

export interface StoredWithSequence extends StoredResource {
  sequence: number;
}

export async function resourcesOfNode(
  db: Executor,
  table: ResourceTable,
  nodeId: string,
): Promise<StoredWithSequence[]> {
  if (table === 'tunnels') {
    return db
      .selectFrom('tunnels')
      .select(['id', 'key', 'name', 'sequence', 'state', 'peer_node_id as peer'])
      .where('node_id', '=', nodeId)
      .execute();
  }
  return db
    .selectFrom('services')
    .select(['id', 'key', 'name', 'sequence', 'status as state'])
    .where('node_id', '=', nodeId)
    .execute();
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
  const values = rows.map((row) => ({
    id: row.id,
    node_id: row.node_id,
    key: row.key,
    name: row.name,
    [STATE_COLUMN[table]]: row.state,
    ...(table === 'tunnels' ? { peer_node_id: row.peer_node_id ?? null } : {}),
    state_since: row.at,
    sequence: 1,
    created_at: row.at,
  }));
  await db.insertInto(table).values(values).execute();
}

export async function updateResource(
  db: Executor,
  table: ResourceTable,
  id: string,
  changes: {
    name: string;
    state?: string;
    sequence?: number;
    stateSince?: number;
    peerNodeId?: string | null;
  },
): Promise<void> {
  await db
    .updateTable(table)
    .set({
      name: changes.name,
      ...(changes.state === undefined ? {} : { [STATE_COLUMN[table]]: changes.state }),
      ...(changes.sequence === undefined ? {} : { sequence: changes.sequence }),
      ...(changes.stateSince === undefined ? {} : { state_since: changes.stateSince }),
      ...(table === 'tunnels' && changes.peerNodeId !== undefined
        ? { peer_node_id: changes.peerNodeId }
        : {}),
    } as never)
    .where('id', '=', id)
    .execute();
}
