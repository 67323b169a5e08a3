import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../../db/types.js';
import type { NodeSort } from './schemas.js';

type SortColumn =
  | 'nodes.id'
  | 'nodes.name'
  | 'nodes.name_sort'
  | 'nodes.node_state'
  | 'nodes.last_seen_at'
  | 'nodes.software_version'
  | 'nodes.tunnels_down'
  | 'nodes.services_down';
/** One key of an order: its column, whether descending, and where nulls go (when the column has any). */
type SortKey = { column: SortColumn; desc?: boolean; nullsFirst?: boolean };

const key = (column: SortColumn, more: Omit<SortKey, 'column'> = {}): SortKey => ({ column, ...more });
/** Never seen (null) is the longest silence of all. */
const LONGEST_SILENT_FIRST = key('nodes.last_seen_at', { nullsFirst: true });

/**
 * The node list's orders, each ascending and before the final id; `-` reverses every key, nulls too, so the
 * same index read backwards serves it (migrations/0021_node_sort.ts). The states' names sort in the order of
 * health (ALIVE, NEW, UNREACHABLE), so problems first is node_state descending. By organization is put
 * together page by page instead (repo.ts). By tunnels and services: how many are away from their good state
 * (migrations/0024_node_resource_counts.ts).
 */
const ORDERS: Record<'unsorted' | Exclude<NodeSort, `-${string}` | 'organization'>, SortKey[]> = {
  unsorted: [key('nodes.name')],
  name: [key('nodes.name_sort')],
  state: [key('nodes.node_state'), key('nodes.name_sort')],
  last_seen: [LONGEST_SILENT_FIRST],
  problems: [key('nodes.node_state', { desc: true }), LONGEST_SILENT_FIRST],
  // Never reported (null) is the oldest version of all.
  version: [key('nodes.software_version', { nullsFirst: true }), key('nodes.name_sort')],
  tunnels: [key('nodes.tunnels_down'), key('nodes.name_sort')],
  services: [key('nodes.services_down'), key('nodes.name_sort')],
};

function keysOf(sort: Exclude<NodeSort, 'organization' | '-organization'> | undefined): SortKey[] {
  const keys = [...ORDERS[(sort?.replace(/^-/, '') as keyof typeof ORDERS) ?? 'unsorted'], key('nodes.id')];
  if (!sort?.startsWith('-')) return keys;
  return keys.map(({ column, desc, nullsFirst }) => ({
    column,
    desc: !desc,
    ...(nullsFirst === undefined ? {} : { nullsFirst: !nullsFirst }),
  }));
}

/** The query in the order `sort` names; by name as stored, then id, without one. */
export function ordered<DB extends Database, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  sort: Exclude<NodeSort, 'organization' | '-organization'> | undefined,
): SelectQueryBuilder<DB, TB, O> {
  let result = query;
  for (const { column, desc, nullsFirst } of keysOf(sort)) {
    result = result.orderBy(sql.ref(column), (ob) => {
      const directed = desc ? ob.desc() : ob.asc();
      if (nullsFirst === undefined) return directed;
      return nullsFirst ? directed.nullsFirst() : directed.nullsLast();
    });
  }
  return result;
}
