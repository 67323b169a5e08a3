import { paginate } from '../../../db/paginate.js';
import type { Executor, FleetEventsTable } from '../../../db/types.js';
import type { Page, PageRequest } from '../../../http/lists.js';
import { subtreeIds } from '../../orgs/repo.js';

export interface EventView extends FleetEventsTable {
  org_name: string;
  node_name: string | null;
}

export interface EventFilters {
  orgId: string;
  includeChild: boolean;
  nodeId?: string;
  type?: string;
  resourceKind?: string;
  from?: number;
  to?: number;
}

/** A page of the events that match, newest first. */
export async function listEvents(
  db: Executor,
  filters: EventFilters,
  page: PageRequest,
): Promise<Page<EventView>> {
  let query = db
    .selectFrom('fleet_events')
    .innerJoin('organizations', 'organizations.id', 'fleet_events.org_id')
    .leftJoin('nodes', 'nodes.id', 'fleet_events.node_id')
    .selectAll('fleet_events')
    .select(['organizations.name as org_name', 'nodes.name as node_name']);
  query = filters.includeChild
    ? query.where('fleet_events.org_id', 'in', subtreeIds(db, filters.orgId))
    : query.where('fleet_events.org_id', '=', filters.orgId);
  if (filters.nodeId !== undefined) query = query.where('fleet_events.node_id', '=', filters.nodeId);
  if (filters.type !== undefined) query = query.where('fleet_events.type', '=', filters.type);
  if (filters.resourceKind !== undefined)
    query = query.where('fleet_events.resource_kind', '=', filters.resourceKind);
  if (filters.from !== undefined) query = query.where('fleet_events.occurred_at', '>=', filters.from);
  if (filters.to !== undefined) query = query.where('fleet_events.occurred_at', '<=', filters.to);
  return paginate(
    db,
    query.orderBy('fleet_events.occurred_at', 'desc').orderBy('fleet_events.id', 'desc'),
    page,
  );
}
