import { sql } from 'kysely';
import { isPostgres } from '../../../db/connect.js';
import { paginate } from '../../../db/paginate.js';
import { givenColumns, Prepared, rowSlots, slot } from '../../../db/prepared.js';
import type { Executor, NodesTable, NodeState } from '../../../db/types.js';
import type { Page, PageRequest } from '../../../http/lists.js';
import { ordered } from './list-order.js';
import type { NodeSort } from './schemas.js';
import { subtreeIds } from '../../orgs/repo.js';
import { likePattern } from '../../../db/like.js';
import { jsonArrayFrom as postgresJsonArray } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArray } from 'kysely/helpers/sqlite';
import { resourcesOfNodeQuery, type StoredWithSequence } from '../resources-repo.js';

export type NodeRow = NodesTable;

export interface NodeView extends NodeRow {
  org_name: string;
}

export interface NodeFilters {
  orgId: string;
  includeChild: boolean;
  nodeState?: NodeState;
  /** Part of the name or serial number, any case. */
  search?: string;
  label?: { key: string; value: string };
}

export async function insertNode(db: Executor, row: NodeRow, labels: Record<string, string>): Promise<void> {
  await db.insertInto('nodes').values(row).execute();
  await replaceLabels(db, row.id, labels);
}

/** The node's labels as rows too, so a label filter is an indexed lookup. */
export async function replaceLabels(
  db: Executor,
  nodeId: string,
  labels: Record<string, string>,
): Promise<void> {
  await db.deleteFrom('node_labels').where('node_id', '=', nodeId).execute();
  const rows = Object.entries(labels).map(([key, value]) => ({ node_id: nodeId, key, value }));
  if (rows.length > 0) await db.insertInto('node_labels').values(rows).execute();
}

export async function updateNode(db: Executor, id: string, changes: Partial<NodeRow>): Promise<void> {
  const given = givenColumns(changes);
  if (given.length > 0) await UPDATE_NODE.execute(db, { given }, { id, changes });
}

/** Compiled once per set of columns changed: every applied report updates its node. */
const UPDATE_NODE = new Prepared((db: Executor, shape: { given: (keyof NodeRow)[] }) =>
  db.updateTable('nodes').set(rowSlots<NodeRow>('changes', shape.given)).where('id', '=', slot<string>('id')),
);

/** What a report reads of its node's tunnels or services, with the node (resources-repo.ts StoredWithSequence). */
export type LockedNode = NodeRow & {
  matching_version: number;
  tunnels?: StoredWithSequence[];
  services?: StoredWithSequence[];
};

/**
 * The node, locked until the transaction ends (PostgreSQL: FOR UPDATE; SQLite has one writer anyway): two
 * reports of one node at once are applied one after the other. With it, the version of what events are
 * matched against (notifications/matching-snapshot.ts) and, when asked, its tunnels or services, so that a
 * report reads nothing else before it writes.
 */
export async function lockNode(
  db: Executor,
  nodeId: string,
  withResources: { tunnels?: boolean; services?: boolean } = {},
): Promise<LockedNode | undefined> {
  const shape = { tunnels: withResources.tunnels === true, services: withResources.services === true };
  const [row] = await LOCK_NODE.execute(db, shape, { nodeId });
  if (row === undefined) return undefined;
  const node: LockedNode = { ...row, matching_version: Number(row.matching_version) };
  // SQLite answers the JSON arrays as text, PostgreSQL parsed.
  for (const table of ['tunnels', 'services'] as const) {
    const list = (row as Record<string, unknown>)[table];
    if (typeof list === 'string') node[table] = JSON.parse(list) as StoredWithSequence[];
  }
  return node;
}

const LOCK_NODE = new Prepared((db: Executor, shape: { tunnels: boolean; services: boolean }) => {
  const jsonArrayFrom = isPostgres(db) ? postgresJsonArray : sqliteJsonArray;
  let query = db
    .selectFrom('nodes')
    .selectAll('nodes')
    .select((eb) =>
      eb.selectFrom('matching_version').select('version').where('id', '=', 1).as('matching_version'),
    )
    .where('nodes.id', '=', slot<string>('nodeId'));
  for (const table of ['tunnels', 'services'] as const) {
    if (shape[table]) {
      query = query.select(() =>
        jsonArrayFrom(resourcesOfNodeQuery(db, table, sql.ref('nodes.id'))).as(table),
      );
    }
  }
  return isPostgres(db) ? query.forUpdate('nodes') : query;
});

/** What the report route needs of the node a token belongs to: a lookup for every report. */
export async function nodeByTokenHash(db: Executor, tokenHash: string) {
  const [node] = await NODE_BY_TOKEN_HASH.execute(db, {}, { tokenHash });
  return node;
}

const NODE_BY_TOKEN_HASH = new Prepared((db: Executor) =>
  db
    .selectFrom('nodes')
    .select(['id', 'node_state', 'report_digest'])
    .where('token_hash', '=', slot<string>('tokenHash')),
);

/**
 * After a change to nodes' tunnels or services made outside their reports, their next report is applied
 * in full rather than taken as a repeat of the last one (reports/digest.ts).
 */
export async function forgetReportedState(db: Executor, nodeIds: readonly string[]): Promise<void> {
  if (nodeIds.length > 0) {
    await db.updateTable('nodes').set({ report_digest: null }).where('id', 'in', nodeIds).execute();
  }
}

/** The nodes with a tunnel to this one. */
export async function peersOf(db: Executor, nodeId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('tunnels')
    .select('node_id')
    .distinct()
    .where('peer_node_id', '=', nodeId)
    .execute();
  return rows.map((row) => row.node_id);
}

export async function deleteNode(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('nodes').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function serialTaken(db: Executor, serial: string, exceptId?: string): Promise<boolean> {
  let query = db.selectFrom('nodes').select('id').where('hardware_serial_number', '=', serial);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

function viewQuery(db: Executor) {
  return db
    .selectFrom('nodes')
    .innerJoin('organizations', 'organizations.id', 'nodes.org_id')
    .selectAll('nodes')
    .select('organizations.name as org_name');
}

export async function findNode(db: Executor, id: string): Promise<NodeView | undefined> {
  return viewQuery(db).where('nodes.id', '=', id).executeTakeFirst();
}

/** A page of the nodes that match, in the order asked for (by name then id by default). */
export async function listNodes(
  db: Executor,
  filters: NodeFilters,
  page: PageRequest,
  sort?: NodeSort,
): Promise<Page<NodeView>> {
  let query = viewQuery(db);
  // Without statistics SQLite takes the organization filter for the most selective term and sorts every
  // node it matches; `+` (SQLite's way to keep a term off an index) lets it read the order's own index.
  const orgId =
    sort !== undefined && !isPostgres(db) ? sql<string>`+nodes.org_id` : sql.ref<string>('nodes.org_id');
  query = filters.includeChild
    ? query.where(orgId, 'in', subtreeIds(db, filters.orgId))
    : query.where(orgId, '=', filters.orgId);
  if (filters.nodeState !== undefined) query = query.where('nodes.node_state', '=', filters.nodeState);
  if (filters.search !== undefined) {
    const pattern = likePattern(filters.search);
    query = query.where((eb) =>
      eb.or([
        eb(sql`lower(nodes.name)`, 'like', pattern),
        eb(sql`lower(nodes.hardware_serial_number)`, 'like', pattern),
      ]),
    );
  }
  if (filters.label !== undefined) {
    const { key, value } = filters.label;
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('node_labels')
          .select('node_labels.node_id')
          .whereRef('node_labels.node_id', '=', 'nodes.id')
          .where('node_labels.key', '=', key)
          .where('node_labels.value', '=', value),
      ),
    );
  }
  if (sort === 'organization' || sort === '-organization')
    return pageByOrganization(db, query, page, sort === 'organization' ? 'asc' : 'desc');
  return paginate(db, ordered(query, sort), page);
}

/**
 * By organization, then name: no index of `nodes` holds the organizations' names, and sorting a whole fleet
 * by them costs more than a page is worth. So the page is put together from the number of matching nodes
 * in each organization, in the order of their names, and the slice of each organization the page covers,
 * read in order from its `(org_id, name_sort, id)` index.
 */
async function pageByOrganization(
  db: Executor,
  matching: ReturnType<typeof viewQuery>,
  page: PageRequest,
  direction: 'asc' | 'desc',
): Promise<Page<NodeView>> {
  const counted = matching
    .clearSelect()
    .select(['nodes.org_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .groupBy('nodes.org_id');
  const perOrg = await db
    .selectFrom('organizations')
    .innerJoin(counted.as('counted'), 'counted.org_id', 'organizations.id')
    .select(['counted.org_id', 'counted.n'])
    .orderBy('organizations.name', direction)
    .orderBy('organizations.id', direction)
    .execute();
  const results: NodeView[] = [];
  let skip = page.page * page.size;
  for (const { org_id, n } of perOrg) {
    const count = Number(n);
    if (results.length === page.size) break;
    if (skip >= count) {
      skip -= count;
      continue;
    }
    const slice = await matching
      .where('nodes.org_id', '=', org_id)
      .orderBy('nodes.name_sort', direction)
      .orderBy('nodes.id', direction)
      .limit(page.size - results.length)
      .offset(skip)
      .execute();
    results.push(...slice);
    skip = 0;
  }
  return { total_count: perOrg.reduce((sum, { n }) => sum + Number(n), 0), results };
}

/** Tunnels by state and services by status, per node. */
export async function resourceCounts(
  db: Executor,
  nodeIds: readonly string[],
): Promise<{ tunnels: Map<string, Record<string, number>>; services: Map<string, Record<string, number>> }> {
  const tunnels = new Map<string, Record<string, number>>();
  const services = new Map<string, Record<string, number>>();
  if (nodeIds.length === 0) return { tunnels, services };
  const [tunnelRows, serviceRows] = await Promise.all([
    db
      .selectFrom('tunnels')
      .select(['node_id', 'state as value', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('node_id', 'in', nodeIds)
      .groupBy(['node_id', 'state'])
      .execute(),
    db
      .selectFrom('services')
      .select(['node_id', 'status as value', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('node_id', 'in', nodeIds)
      .groupBy(['node_id', 'status'])
      .execute(),
  ]);
  for (const [rows, into] of [
    [tunnelRows, tunnels],
    [serviceRows, services],
  ] as const) {
    for (const row of rows) {
      const counts = into.get(row.node_id) ?? {};
      counts[row.value] = Number(row.n);
      into.set(row.node_id, counts);
    }
  }
  return { tunnels, services };
}
