import type { AlertsTable, Executor } from '../../db/types.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { newId } from '../../lib/ids.js';
import { paginate } from '../../db/paginate.js';
import { subtreeIds } from '../orgs/repo.js';

export type AlertRow = AlertsTable;

export interface AlertView extends AlertRow {
  creator_name: string;
  webhook_name: string | null;
}

export async function insertAlert(db: Executor, row: AlertRow): Promise<void> {
  await db.insertInto('alerts').values(row).execute();
}

export async function updateAlert(db: Executor, id: string, changes: Partial<AlertRow>): Promise<void> {
  await db.updateTable('alerts').set(changes).where('id', '=', id).execute();
}

function viewQuery(db: Executor, userId: string) {
  return db
    .selectFrom('alerts')
    .innerJoin('users', 'users.id', 'alerts.user_id')
    .leftJoin('webhooks', 'webhooks.id', 'alerts.webhook_id')
    .selectAll('alerts')
    .select(['users.name as creator_name', 'webhooks.name as webhook_name'])
    .where('alerts.user_id', '=', userId);
}

/** A page of the user's alerts, or of those whose org_id is `underOrgId` or below it. */
export async function listOwnAlerts(
  db: Executor,
  userId: string,
  page: PageRequest,
  underOrgId?: string,
): Promise<Page<AlertView>> {
  let query = viewQuery(db, userId);
  if (underOrgId !== undefined) query = query.where('alerts.org_id', 'in', subtreeIds(db, underOrgId));
  return paginate(db, query.orderBy('alerts.created_at').orderBy('alerts.id'), page);
}

export async function findOwnAlert(db: Executor, id: string, userId: string): Promise<AlertView | undefined> {
  return viewQuery(db, userId).where('alerts.id', '=', id).executeTakeFirst();
}

/** Deletes one of the user's alerts; false when there was none (so two racing deletes cannot both succeed). */
export async function deleteOwnAlert(db: Executor, id: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('alerts')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function deleteAlerts(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('alerts').where('id', 'in', ids).execute();
}

export async function countWebhookAlertsOfUser(
  db: Executor,
  userId: string,
  exceptId?: string,
): Promise<number> {
  let query = db
    .selectFrom('alerts')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('channel_type', '=', 'webhook');
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function alertIdsUsingWebhook(db: Executor, webhookId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('alerts')
    .select('id')
    .where('webhook_id', '=', webhookId)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Live number of alerts per webhook: counted, never stored, so it cannot drift. */
export async function subscriptionCounts(
  db: Executor,
  webhookIds: readonly string[],
): Promise<Map<string, number>> {
  if (webhookIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('alerts')
    .select(['webhook_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('webhook_id', 'in', webhookIds)
    .groupBy('webhook_id')
    .execute();
  return new Map(rows.map((row) => [row.webhook_id ?? '', Number(row.n)]));
}

/**
 * The user's e-mail channel resource, made the first time an alert needs it. A concurrent first insert is
 * absorbed by `on conflict do nothing`, not caught: after an error PostgreSQL refuses the rest of the transaction.
 */
export async function ensureEmailChannel(db: Executor, userId: string, now: number): Promise<string> {
  const existing = await emailChannelOf(db, userId).executeTakeFirst();
  if (existing !== undefined) return existing.id;
  await db
    .insertInto('email_channels')
    .values({ id: newId(now), user_id: userId, created_at: now })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
  return (await emailChannelOf(db, userId).executeTakeFirstOrThrow()).id;
}

function emailChannelOf(db: Executor, userId: string) {
  return db.selectFrom('email_channels').select('id').where('user_id', '=', userId);
}

/** Something an alert can be scoped to (docs/rules/alerts-and-fleet.md#scopes). */
export type ScopeTarget = { node: string } | { tunnel: string } | { service: string };

/** The alerts that watch the target: for a node, also those scoped to its tunnels and services. */
export async function alertsScopedTo(
  db: Executor,
  target: ScopeTarget,
): Promise<{ id: string; user_id: string }[]> {
  let query = db.selectFrom('alerts').select(['id', 'user_id']);
  if ('node' in target) {
    const nodeId = target.node;
    query = query.where((eb) =>
      eb.or([
        eb('scope_node_id', '=', nodeId),
        eb('scope_tunnel_id', 'in', eb.selectFrom('tunnels').select('id').where('node_id', '=', nodeId)),
        eb('scope_service_id', 'in', eb.selectFrom('services').select('id').where('node_id', '=', nodeId)),
      ]),
    );
  } else if ('tunnel' in target) {
    query = query.where('scope_tunnel_id', '=', target.tunnel);
  } else {
    query = query.where('scope_service_id', '=', target.service);
  }
  return query.orderBy('id').execute();
}
