import { firstIdAt } from '../../../lib/ids.js';
import { paginate } from '../../../db/paginate.js';
import { allColumns, Prepared, rowsSlots } from '../../../db/prepared.js';
import type { Executor, FleetEventsTable } from '../../../db/types.js';
import type { Page, PageRequest } from '../../../http/lists.js';
import { subtreeIds } from '../../orgs/repo.js';

/** Every query of the `fleet_events` table is here. */

export type FleetEventRow = FleetEventsTable;

export async function insertEvents(db: Executor, events: readonly FleetEventRow[]): Promise<void> {
  if (events.length > 0) await INSERT_EVENTS.execute(db, { count: events.length }, { events });
}

const EVENT_COLUMNS = allColumns<FleetEventRow>({
  id: true,
  type: true,
  condition: true,
  org_id: true,
  node_id: true,
  resource_kind: true,
  resource_id: true,
  resource_name: true,
  previous_state: true,
  current_state: true,
  sequence: true,
  occurred_at: true,
  detected_at: true,
});

/** Compiled once per number of events: a report's events are one statement. */
const INSERT_EVENTS = new Prepared((db: Executor, shape: { count: number }) =>
  db.insertInto('fleet_events').values(rowsSlots<FleetEventRow>('events', EVENT_COLUMNS, shape.count)),
);

export async function findEvent(db: Executor, id: string): Promise<FleetEventRow | undefined> {
  return db.selectFrom('fleet_events').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function eventsOfNode(db: Executor, nodeId: string): Promise<FleetEventRow[]> {
  return db
    .selectFrom('fleet_events')
    .selectAll()
    .where('node_id', '=', nodeId)
    .orderBy('occurred_at')
    .orderBy('id')
    .execute();
}

/** Whether the node already has an event of this type, condition and current state (an expiry's). */
export async function nodeHasEvent(
  db: Executor,
  nodeId: string,
  event: Pick<FleetEventRow, 'type' | 'condition' | 'current_state'>,
): Promise<boolean> {
  const found = await db
    .selectFrom('fleet_events')
    .select('id')
    .where('node_id', '=', nodeId)
    .where('type', '=', event.type)
    .where('condition', '=', event.condition)
    .where('current_state', '=', event.current_state)
    .executeTakeFirst();
  return found !== undefined;
}

/**
 * Removes events detected before `before`; returns how many. An event's id is a UUIDv7 of its `detected_at`
 * (never earlier than `occurred_at`), so the primary key finds them: no index on time is written with every
 * event for a query that runs once an hour.
 */
export async function pruneEvents(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('fleet_events').where('id', '<', firstIdAt(before)).executeTakeFirst();
  return Number(result.numDeletedRows);
}

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

export type StateChange = Pick<FleetEventRow, 'occurred_at' | 'previous_state' | 'current_state'>;

/** The node's NODE_STATE_CHANGE events in [from, to), oldest first, at most `limit`. */
export async function nodeStateChanges(
  db: Executor,
  nodeId: string,
  window: { from: number; to: number },
  limit: number,
): Promise<StateChange[]> {
  const rows = await db
    .selectFrom('fleet_events')
    .select(['occurred_at', 'previous_state', 'current_state'])
    .where('node_id', '=', nodeId)
    .where('type', '=', 'NODE_STATE_CHANGE')
    .where('occurred_at', '>=', window.from)
    .where('occurred_at', '<', window.to)
    .orderBy('occurred_at')
    .orderBy('sequence')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, occurred_at: Number(row.occurred_at) }));
}

/** The node's first NODE_STATE_CHANGE event at or after `at`. */
export async function nextNodeStateChange(
  db: Executor,
  nodeId: string,
  at: number,
): Promise<StateChange | undefined> {
  const [next] = await nodeStateChanges(db, nodeId, { from: at, to: Number.MAX_SAFE_INTEGER }, 1);
  return next;
}
