import { firstIdAt } from '../../lib/ids.js';
import { sql } from 'kysely';
import { paginate } from '../../db/paginate.js';
import { allColumns, Prepared, rowSlots, slot } from '../../db/prepared.js';
import type { AlertsTable, Executor, FleetEventsTable, NotificationsTable } from '../../db/types.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { attemptsOf } from '../deliveries/log-repo.js';
import { subtreeIds } from '../orgs/repo.js';

export type EventRow = FleetEventsTable;
export type NotificationRow = NotificationsTable;
export type WatchingAlert = Pick<
  AlertsTable,
  | 'id'
  | 'user_id'
  | 'name'
  | 'type'
  | 'org_id'
  | 'include_child'
  | 'alert_me'
  | 'duration_minutes'
  | 'channel_type'
  | 'webhook_id'
  | 'scope_node_id'
  | 'scope_tunnel_id'
  | 'scope_service_id'
  | 'suppress_when_node_unreachable'
  | 'group_by'
  | 'group_wait_s'
  | 'group_interval_s'
  | 'repeat_interval_s'
> & {
  /** Its webhook's is_enabled (null for e-mail alerts), read with the alert. */
  webhook_enabled: number | null;
};

const ALERT_COLUMNS = [
  'alerts.id',
  'alerts.user_id',
  'alerts.name',
  'alerts.type',
  'alerts.org_id',
  'alerts.include_child',
  'alerts.alert_me',
  'alerts.duration_minutes',
  'alerts.channel_type',
  'alerts.webhook_id',
  'alerts.scope_node_id',
  'alerts.scope_tunnel_id',
  'alerts.scope_service_id',
  'alerts.suppress_when_node_unreachable',
  'alerts.group_by',
  'alerts.group_wait_s',
  'alerts.group_interval_s',
  'alerts.repeat_interval_s',
  'webhooks.is_enabled as webhook_enabled',
] as const;

function watchingAlerts(db: Executor) {
  return db
    .selectFrom('alerts')
    .leftJoin('webhooks', 'webhooks.id', 'alerts.webhook_id')
    .select(ALERT_COLUMNS);
}

/** Every alert, for the matching snapshot (matching-snapshot.ts), read again only when one changed. */
export async function allAlerts(db: Executor): Promise<WatchingAlert[]> {
  return watchingAlerts(db).orderBy('alerts.id').execute();
}

export async function findAlert(db: Executor, id: string): Promise<WatchingAlert | undefined> {
  return watchingAlerts(db).where('alerts.id', '=', id).executeTakeFirst();
}

/** Inserts the notification unless one exists for its alert and event; whether it was inserted. */
export async function insertNotification(db: Executor, row: NotificationRow): Promise<boolean> {
  const { changed } = await INSERT_NOTIFICATION.run(db, {}, { row });
  return changed === 1;
}

const NOTIFICATION_COLUMNS = allColumns<NotificationRow>({
  id: true,
  user_id: true,
  alert_id: true,
  alert_name: true,
  event_id: true,
  type: true,
  condition: true,
  org_id: true,
  node_id: true,
  channel_type: true,
  webhook_id: true,
  email_id: true,
  status: true,
  reason: true,
  silence_id: true,
  incident_id: true,
  incident_sequence: true,
  payload: true,
  occurred_at: true,
  created_at: true,
});

const INSERT_NOTIFICATION = new Prepared((db: Executor) =>
  db
    .insertInto('notifications')
    .values(rowSlots<NotificationRow>('row', NOTIFICATION_COLUMNS))
    .onConflict((oc) => oc.columns(['alert_id', 'event_id']).doNothing()),
);

/** The current sequence of the event's resource; undefined when it is gone. */
export async function currentSequence(db: Executor, event: EventRow): Promise<number | undefined> {
  const table =
    event.resource_kind === 'tunnel' ? 'tunnels' : event.resource_kind === 'service' ? 'services' : 'nodes';
  const row = await db
    .selectFrom(table)
    .select('sequence')
    .where('id', '=', event.resource_id)
    .executeTakeFirst();
  return row?.sequence;
}

export interface NotificationFilters {
  /** The owner's notifications (those of their alerts); undefined: everyone's, which orgIds then bound. */
  userId?: string;
  type?: string;
  nodeId?: string;
  /** The organization and those below it. */
  orgId?: string;
  /** Only these organizations (listed, not a subquery: PostgreSQL then reads them by index). */
  orgIds?: readonly string[];
  alertId?: string;
  status?: string;
  from?: number;
  to?: number;
}

/**
 * A page of notifications, newest first. An incident's messages are not listed: they speak for the
 * notifications that joined it, and the incident lists them (GET /api/v1/incident/{id}).
 */
export async function listNotifications(
  db: Executor,
  filters: NotificationFilters,
  page: PageRequest,
): Promise<Page<NotificationRow>> {
  let query = db.selectFrom('notifications').selectAll().where('incident_sequence', 'is', null);
  if (filters.userId !== undefined) query = query.where('user_id', '=', filters.userId);
  if (filters.type !== undefined) query = query.where('type', '=', filters.type);
  if (filters.nodeId !== undefined) query = query.where('node_id', '=', filters.nodeId);
  if (filters.orgId !== undefined) query = query.where('org_id', 'in', subtreeIds(db, filters.orgId));
  if (filters.orgIds !== undefined) query = query.where('org_id', 'in', filters.orgIds);
  if (filters.alertId !== undefined) query = query.where('alert_id', '=', filters.alertId);
  if (filters.status !== undefined)
    query = query.where('status', '=', filters.status as NotificationRow['status']);
  if (filters.from !== undefined) query = query.where('created_at', '>=', filters.from);
  if (filters.to !== undefined) query = query.where('created_at', '<=', filters.to);
  return paginate(db, query.orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

/** The ids of an organization and those below it; empty when it does not exist. */
export async function organizationsBelow(db: Executor, orgId: string): Promise<string[]> {
  const rows = await subtreeIds(db, orgId).execute();
  return rows.map((row) => row.id);
}

export async function findNotification(db: Executor, id: string): Promise<NotificationRow | undefined> {
  return db
    .selectFrom('notifications')
    .selectAll()
    .where('id', '=', id)
    .where('incident_sequence', 'is', null)
    .executeTakeFirst();
}

/** The ids whose current names a page of notifications or deliveries shows, by what they name. */
export interface NameLookup {
  organizations: readonly string[];
  nodes: readonly string[];
  tunnels: readonly string[];
  services: readonly string[];
  users: readonly string[];
}

export type CurrentNames = { [Kind in keyof NameLookup]: Map<string, string> };

/** The current names of the ids given, in one statement; an id that is gone has none. */
export async function currentNames(db: Executor, lookup: NameLookup): Promise<CurrentNames> {
  const names: CurrentNames = {
    organizations: new Map(),
    nodes: new Map(),
    tunnels: new Map(),
    services: new Map(),
    users: new Map(),
  };
  const kinds = (Object.keys(names) as (keyof NameLookup)[]).filter((kind) => lookup[kind].length > 0);
  const parts = kinds.map((kind) =>
    db
      .selectFrom(kind)
      .select([sql.lit(kind).as('kind'), 'id', 'name'])
      .where('id', 'in', [...new Set(lookup[kind])]),
  );
  const [first, ...rest] = parts;
  if (first === undefined) return names;
  const rows = await rest.reduce((union, part) => union.unionAll(part), first).execute();
  for (const row of rows) names[row.kind].set(row.id, row.name);
  return names;
}

export async function deliveriesOf(db: Executor, notificationId: string) {
  const deliveries = await db
    .selectFrom('deliveries')
    .selectAll()
    .where('notification_id', '=', notificationId)
    .orderBy('created_at')
    .execute();
  const attempts = await attemptsOf(
    db,
    deliveries.map((delivery) => delivery.id),
  );
  return deliveries.map((delivery) => ({
    ...delivery,
    attempts: attempts.filter((attempt) => attempt.delivery_id === delivery.id),
  }));
}

/**
 * Removes notifications (with their deliveries and attempts) made before `before`, and the incidents
 * resolved before it (with their members); how many notifications. A notification's id is a UUIDv7 of its `created_at`, so the primary key finds them: no index on
 * `created_at` is written with every notification for a query that runs once an hour.
 */
export async function pruneNotifications(db: Executor, before: number): Promise<number> {
  // One whose delivery is in flight waits for its outcome: the next run takes it.
  const result = await db
    .deleteFrom('notifications')
    .where('id', '<', firstIdAt(before))
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('deliveries')
            .select('deliveries.id')
            .whereRef('deliveries.notification_id', '=', 'notifications.id')
            .where('deliveries.lease_until', 'is not', null),
        ),
      ),
    )
    .executeTakeFirst();
  await db
    .deleteFrom('incidents')
    .where('status', '=', 'resolved')
    .where('resolved_at', '<', before)
    .execute();
  return Number(result.numDeletedRows);
}

/** A node's name; empty for a node that is gone. */
export async function nodeName(db: Executor, nodeId: string): Promise<string> {
  const node = await db.selectFrom('nodes').select('name').where('id', '=', nodeId).executeTakeFirst();
  return node?.name ?? '';
}

/** The state of the node a change happened on and, for a tunnel, of the peer node it leads to. */
export async function nodeStatesBehind(
  db: Executor,
  event: EventRow,
): Promise<{ node: string | undefined; peer: string | null | undefined }> {
  if (event.resource_kind === 'tunnel') {
    const [row] = await TUNNEL_NODE_STATES.execute(db, {}, { tunnelId: event.resource_id });
    return { node: row?.node_state, peer: row?.peer_state };
  }
  const [node] = await NODE_STATE.execute(db, {}, { nodeId: event.node_id });
  return { node: node?.node_state, peer: undefined };
}

const TUNNEL_NODE_STATES = new Prepared((db: Executor) =>
  db
    .selectFrom('tunnels')
    .innerJoin('nodes', 'nodes.id', 'tunnels.node_id')
    .leftJoin('nodes as peer', 'peer.id', 'tunnels.peer_node_id')
    .select(['nodes.node_state as node_state', 'peer.node_state as peer_state'])
    .where('tunnels.id', '=', slot<string>('tunnelId')),
);

const NODE_STATE = new Prepared((db: Executor) =>
  db.selectFrom('nodes').select('node_state').where('id', '=', slot<string>('nodeId')),
);

/** A held-back notification's new status: going out, or suppressed again (by a window, when one is named). */
export async function setHeldBackStatus(
  db: Executor,
  id: string,
  status: NotificationRow['status'],
  reason: string | null,
  silenceId: string | null,
): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ status, reason, ...(silenceId === null ? {} : { silence_id: silenceId }) })
    .where('id', '=', id)
    .execute();
}
