import { sql } from 'kysely';
import type { Executor, FleetHistoryTable } from '../../../db/types.js';
import { subtreeIds } from '../../orgs/repo.js';
import { GOOD_STATE, STATE_COLUMN, type ResourceTable } from '../resources-repo.js';

/** Every query of the fleet_history tables is here. */

export type OrgCounts = Omit<FleetHistoryTable, 'org_id' | 'minute'>;
type Counted = keyof OrgCounts;

const NODE_COLUMN = { ALIVE: 'nodes_alive', UNREACHABLE: 'nodes_unreachable', NEW: 'nodes_new' } as const;

const zero = (): OrgCounts => ({
  nodes_alive: 0,
  nodes_unreachable: 0,
  nodes_new: 0,
  tunnels_unhealthy: 0,
  tunnels_unknown: 0,
  services_unhealthy: 0,
  services_unknown: 0,
});

/**
 * Each organization's own nodes by state, and their tunnels and services known to be away from their good
 * state or unknown (their node is UNREACHABLE). Each count is one GROUP BY read through an index that holds
 * only what it counts (0022_fleet_history), so a minute costs little at 100,000 nodes.
 */
export async function countFleet(db: Executor): Promise<Map<string, OrgCounts>> {
  const counts = new Map<string, OrgCounts>();
  const add = (rows: { org_id: string; n: number | string | bigint }[], column: Counted) => {
    for (const row of rows) {
      let org = counts.get(row.org_id);
      if (org === undefined) counts.set(row.org_id, (org = zero()));
      org[column] += Number(row.n);
    }
  };
  const nodes = await db
    .selectFrom('nodes')
    .select(['org_id', 'node_state', (eb) => eb.fn.countAll<number | string>().as('n')])
    .groupBy(['org_id', 'node_state'])
    .execute();
  for (const state of ['ALIVE', 'UNREACHABLE', 'NEW'] as const) {
    add(
      nodes.filter((row) => row.node_state === state),
      NODE_COLUMN[state],
    );
  }
  for (const table of ['tunnels', 'services'] as const) {
    add(await countUnhealthy(db, table), `${table}_unhealthy`);
    add(await countUnknown(db, table), `${table}_unknown`);
  }
  return counts;
}

/** The fleet as it is now, summed over an organization (and those below it): the present's point. */
export async function countNow(db: Executor, orgId: string, includeChild: boolean): Promise<OrgCounts> {
  const orgs = includeChild ? (await subtreeIds(db, orgId).execute()).map((row) => row.id) : [orgId];
  const fleet = await countFleet(db);
  const sum = zero();
  for (const counts of orgs.map((org) => fleet.get(org))) {
    if (counts === undefined) continue;
    for (const column of Object.keys(sum) as Counted[]) sum[column] += counts[column];
  }
  return sum;
}

/** The worse of two counts, series by series: fewer alive, more of everything else. */
export function worstOf(a: OrgCounts, b: OrgCounts): OrgCounts {
  const worst = zero();
  for (const column of Object.keys(worst) as Counted[]) {
    worst[column] =
      column === 'nodes_alive' ? Math.min(a[column], b[column]) : Math.max(a[column], b[column]);
  }
  return worst;
}

/** Away from the good state, on nodes that are not UNREACHABLE. */
function countUnhealthy(db: Executor, table: ResourceTable) {
  return (
    db
      .selectFrom(table)
      .innerJoin('nodes', 'nodes.id', `${table}.node_id`)
      .select(['nodes.org_id as org_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      // A literal, as the partial index's own condition is: a parameter would not let the planner use it.
      .where(sql.ref(`${table}.${STATE_COLUMN[table]}`), '<>', sql.lit(GOOD_STATE[table]))
      .where('nodes.node_state', '<>', sql.lit('UNREACHABLE'))
      .groupBy('nodes.org_id')
      .execute()
  );
}

/** Every one of an UNREACHABLE node, whatever it last reported. */
function countUnknown(db: Executor, table: ResourceTable) {
  return db
    .selectFrom(table)
    .innerJoin('nodes', 'nodes.id', `${table}.node_id`)
    .select(['nodes.org_id as org_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('nodes.node_state', '=', 'UNREACHABLE')
    .groupBy('nodes.org_id')
    .execute();
}

const ROWS_PER_STATEMENT = 1_000;

/**
 * Stores the counts of one minute, unless that minute was stored already (by another worker, or a run before
 * a retry): the minute's row is claimed first, in the same transaction. Whether this call stored it.
 */
export async function insertMinute(
  trx: Executor,
  minute: number,
  counts: ReadonlyMap<string, OrgCounts>,
): Promise<boolean> {
  const claimed = await trx
    .insertInto('fleet_history_minutes')
    .values({ minute })
    .onConflict((oc) => oc.column('minute').doNothing())
    .returning('minute')
    .executeTakeFirst();
  if (claimed === undefined) return false;
  const rows = [...counts].map(([org_id, org]) => ({ org_id, minute, ...org }));
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    await trx
      .insertInto('fleet_history')
      .values(rows.slice(i, i + ROWS_PER_STATEMENT))
      .onConflict((oc) => oc.columns(['org_id', 'minute']).doNothing())
      .execute();
  }
  return true;
}

/** Removes the minutes before `before`; returns how many rows went. */
export async function pruneFleetHistory(db: Executor, before: number): Promise<number> {
  const rows = await db.deleteFrom('fleet_history').where('minute', '<', before).executeTakeFirst();
  const minutes = await db
    .deleteFrom('fleet_history_minutes')
    .where('minute', '<', before)
    .executeTakeFirst();
  return Number(rows.numDeletedRows) + Number(minutes.numDeletedRows);
}

export type HistoryPoint = { at: number } & OrgCounts;

export interface HistoryQuery {
  orgId: string;
  includeChild: boolean;
  /** A multiple of stepMs. */
  start: number;
  to: number;
  stepMs: number;
}

/**
 * The steps of the window that hold at least one snapshot, each with the worst minute of every series in it:
 * the fewest nodes alive, the most of everything else. The organization's rows (or its subtree's) are summed
 * per minute first; a taken minute where none of them had a row counts zeros.
 */
export async function historySteps(db: Executor, query: HistoryQuery): Promise<HistoryPoint[]> {
  const orgs = query.includeChild ? subtreeIds(db, query.orgId) : [query.orgId];
  const sumOf = (column: Counted) => sql<number>`coalesce(sum(${sql.ref(`h.${column}`)}), 0)`.as(column);
  const perMinute = db
    .selectFrom('fleet_history_minutes as m')
    .leftJoin('fleet_history as h', (join) =>
      join.onRef('h.minute', '=', 'm.minute').on('h.org_id', 'in', orgs),
    )
    .select([
      'm.minute as minute',
      sumOf('nodes_alive'),
      sumOf('nodes_unreachable'),
      sumOf('nodes_new'),
      sumOf('tunnels_unhealthy'),
      sumOf('tunnels_unknown'),
      sumOf('services_unhealthy'),
      sumOf('services_unknown'),
    ])
    .where('m.minute', '>=', query.start)
    .where('m.minute', '<', query.to)
    .groupBy('m.minute');
  // The step is a validated whole number: a literal, so the select and the GROUP BY are one expression.
  const step = sql<number>`s.minute - s.minute % ${sql.lit(query.stepMs)}`;
  const rows = await db
    .selectFrom(perMinute.as('s'))
    .select((eb) => [
      step.as('at'),
      eb.fn.min('s.nodes_alive').as('nodes_alive'),
      eb.fn.max('s.nodes_unreachable').as('nodes_unreachable'),
      eb.fn.max('s.nodes_new').as('nodes_new'),
      eb.fn.max('s.tunnels_unhealthy').as('tunnels_unhealthy'),
      eb.fn.max('s.tunnels_unknown').as('tunnels_unknown'),
      eb.fn.max('s.services_unhealthy').as('services_unhealthy'),
      eb.fn.max('s.services_unknown').as('services_unknown'),
    ])
    .groupBy(step)
    .orderBy('at')
    .execute();
  return rows.map((row) => ({
    at: Number(row.at),
    nodes_alive: Number(row.nodes_alive),
    nodes_unreachable: Number(row.nodes_unreachable),
    nodes_new: Number(row.nodes_new),
    tunnels_unhealthy: Number(row.tunnels_unhealthy),
    tunnels_unknown: Number(row.tunnels_unknown),
    services_unhealthy: Number(row.services_unhealthy),
    services_unknown: Number(row.services_unknown),
  }));
}
