import { transaction } from '../../../db/transaction.js';
import { forgetReportedState, lockNode } from '../nodes/repo.js';
import { releaseScopedAlerts, removalAnswer } from '../../alerts/scoped-removal.js';
import { sql } from 'kysely';
import type { ServiceContext } from '../../../context.js';
import { paginate } from '../../../db/paginate.js';
import type { Executor } from '../../../db/types.js';
import { notFound } from '../../../http/errors.js';
import type { Page, PageRequest } from '../../../http/lists.js';
import { isoUtc } from '../../../lib/clock.js';
import { isInSubtree, subtreeIds } from '../../orgs/repo.js';
import { recountDown, STATE_COLUMN, type ResourceTable } from '../resources-repo.js';

export interface ResourceListQuery {
  org_id?: string;
  include_child?: boolean;
  node_id?: string;
  /** The state (tunnels) or status (services) to keep. */
  state?: string;
  /** true: only those whose node is UNREACHABLE (their state is its last report's); false: only the others. */
  stale?: boolean;
}

const WHAT = { tunnels: 'Tunnel', services: 'Service' } as const;

function viewQuery(db: Executor, table: ResourceTable) {
  return db
    .selectFrom(table)
    .innerJoin('nodes', 'nodes.id', `${table}.node_id`)
    .innerJoin('organizations', 'organizations.id', 'nodes.org_id')
    .select([
      `${table}.id as id`,
      `${table}.key as key`,
      `${table}.name as name`,
      sql<string>`${sql.ref(`${table}.${STATE_COLUMN[table]}`)}`.as('state'),
      `${table}.state_since as state_since`,
      `${table}.created_at as created_at`,
      'nodes.id as node_id',
      'nodes.name as node_name',
      'nodes.node_state as node_state',
      'nodes.last_seen_at as node_last_seen_at',
      'organizations.id as org_id',
      'organizations.name as org_name',
    ]);
}

type ResourceView = Awaited<ReturnType<ReturnType<typeof viewQuery>['executeTakeFirstOrThrow']>>;

function present(table: ResourceTable, row: ResourceView, peerNodeId: string | null) {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    [STATE_COLUMN[table]]: row.state,
    ...(table === 'tunnels' ? { peer_node_id: peerNodeId } : {}),
    node: { id: row.node_id, name: row.node_name },
    organization: { id: row.org_id, name: row.org_name },
    state_since: isoUtc(row.state_since),
    ...staleness(row.node_state, row.node_last_seen_at),
    created_at: isoUtc(row.created_at),
  };
}

/**
 * A tunnel's or service's state is what its node last reported: while the node is UNREACHABLE it is only the
 * last known one, as of that report (docs/rules/alerts-and-fleet.md#stale-states).
 */
export function staleness(nodeState: string, lastSeenAt: number | null) {
  const stale = nodeState === 'UNREACHABLE';
  return { stale, as_of: stale && lastSeenAt !== null ? isoUtc(Number(lastSeenAt)) : null };
}

async function peers(
  db: Executor,
  table: ResourceTable,
  ids: readonly string[],
): Promise<Map<string, string | null>> {
  if (table !== 'tunnels' || ids.length === 0) return new Map();
  const rows = await db.selectFrom('tunnels').select(['id', 'peer_node_id']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.peer_node_id]));
}

/** The tunnels or services of visible nodes, by name then id. */
export async function listResources(
  ctx: ServiceContext,
  table: ResourceTable,
  query: ResourceListQuery,
  page: PageRequest,
): Promise<Page<ReturnType<typeof present>>> {
  const orgId = query.org_id ?? ctx.actor.orgId;
  if (!(await isInSubtree(ctx.db, ctx.actor.orgId, orgId))) throw notFound('Organization');
  let rows = viewQuery(ctx.db, table);
  rows =
    query.include_child === false
      ? rows.where('nodes.org_id', '=', orgId)
      : rows.where('nodes.org_id', 'in', subtreeIds(ctx.db, orgId));
  if (query.node_id !== undefined) rows = rows.where('nodes.id', '=', query.node_id);
  if (query.state !== undefined)
    rows = rows.where(sql.ref(`${table}.${STATE_COLUMN[table]}`), '=', query.state);
  if (query.stale !== undefined)
    rows = rows.where('nodes.node_state', query.stale ? '=' : '!=', 'UNREACHABLE');
  const found = await paginate(ctx.db, rows.orderBy(`${table}.name`).orderBy(`${table}.id`), page);
  const peerOf = await peers(
    ctx.db,
    table,
    found.results.map((row) => row.id),
  );
  return {
    total_count: found.total_count,
    results: found.results.map((row) => present(table, row, peerOf.get(row.id) ?? null)),
  };
}

async function visibleResource(ctx: ServiceContext, table: ResourceTable, id: string): Promise<ResourceView> {
  const row = await viewQuery(ctx.db, table).where(`${table}.id`, '=', id).executeTakeFirst();
  if (row === undefined || !(await isInSubtree(ctx.db, ctx.actor.orgId, row.org_id)))
    throw notFound(WHAT[table]);
  return row;
}

export async function getResource(ctx: ServiceContext, table: ResourceTable, id: string) {
  const row = await visibleResource(ctx, table, id);
  return present(table, row, (await peers(ctx.db, table, [id])).get(id) ?? null);
}

/**
 * Forgets a tunnel or service until a report lists it again (as a first sighting, with a new id). Alerts
 * scoped to it → 409 unless `force`, which removes them too.
 */
export async function deleteResource(ctx: ServiceContext, table: ResourceTable, id: string, force: boolean) {
  const row = await visibleResource(ctx, table, id);
  const target = table === 'tunnels' ? { tunnel: id } : { service: id };
  const removed = await transaction(ctx.db, async (trx) => {
    // Its node first, as a report does: the two are applied one after the other, and the count is right.
    await lockNode(trx, row.node_id);
    const alertIds = await releaseScopedAlerts(trx, target, WHAT[table].toLowerCase(), force);
    // Gone meanwhile (a forget at the same time went first): this one found nothing, and changes nothing.
    const deleted = await trx.deleteFrom(table).where('id', '=', id).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw notFound(WHAT[table]);
    await recountDown(trx, table, row.node_id);
    await forgetReportedState(trx, [row.node_id]);
    return alertIds;
  });
  return removalAnswer(id, WHAT[table], 'forgotten until a report lists it again', force, removed);
}
