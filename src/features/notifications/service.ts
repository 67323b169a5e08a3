import type { AlertChannelType } from '../../db/types.js';
import type { ServiceContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import { instant } from '../../http/instants.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { requireGranted } from '../../http/auth.js';
import { isInSubtree } from '../orgs/repo.js';
import { listedOrg } from '../orgs/service.js';
import { isoUtc, isoUtcOrNull } from '../../lib/clock.js';
import type { NotificationPayload } from './payload.js';
import { presentAttempt } from '../deliveries/log-service.js';
import { contextsOf, type NotificationContext } from './names.js';
import * as repo from './repo.js';

export interface NotificationListQuery {
  scope?: 'mine' | 'org';
  /** true: only the caller's own, whatever the scope. */
  own?: boolean;
  type?: string;
  node_id?: string;
  org_id?: string;
  alert_id?: string;
  status?: string;
  start_date?: string;
  end_date?: string;
}

function present(row: repo.NotificationRow, payload: NotificationPayload, context: NotificationContext) {
  return {
    id: row.id,
    status: row.status,
    reason: row.reason,
    silence_id: row.silence_id,
    incident_id: row.incident_id,
    alert: { id: row.alert_id, name: row.alert_name },
    owner: context.owner,
    type: row.type,
    condition: row.condition,
    event_id: row.event_id,
    organization: context.organization,
    node: context.node,
    resource: context.resource,
    channel_type: row.channel_type.toUpperCase() as Uppercase<AlertChannelType>,
    webhook_id: row.webhook_id,
    occurred_at: isoUtc(row.occurred_at),
    created_at: isoUtc(row.created_at),
    payload,
  };
}

export type NotificationJson = ReturnType<typeof present>;

async function presentAll(ctx: ServiceContext, rows: readonly repo.NotificationRow[]) {
  const facts = rows.map((row) => ({ ...row, payload: JSON.parse(row.payload) as NotificationPayload }));
  const contexts = await contextsOf(ctx.db, facts);
  return rows.map((row, index) => present(row, facts[index]!.payload, contexts[index]!));
}

/**
 * Whose notifications a list shows: the caller's own (scope mine), or everyone's in the caller's
 * organization and those below it (scope org, for roles granted org_notifications:read, unless own=true
 * narrows it back to the caller's), where an org_id outside that subtree is 404 as in the fleet's lists.
 */
export async function whoseNotifications(
  ctx: ServiceContext,
  query: Pick<NotificationListQuery, 'scope' | 'org_id' | 'own'>,
) {
  if (query.scope !== 'org' || query.own === true) {
    const orgId = await listedOrg(ctx, query.org_id);
    return { userId: ctx.actor.userId, ...(orgId === undefined ? {} : { orgId }) };
  }
  requireGranted(ctx.actor, 'org_notifications:read');
  const visible = await repo.organizationsBelow(ctx.db, ctx.actor.orgId);
  if (query.org_id === undefined) return { orgIds: visible };
  if (!visible.includes(query.org_id)) throw notFound('Organization');
  return { orgIds: await repo.organizationsBelow(ctx.db, query.org_id) };
}

/** The caller's own notifications, or their organizations' (scope=org), newest first. */
export async function listNotifications(
  ctx: ServiceContext,
  query: NotificationListQuery,
  page: PageRequest,
): Promise<Page<NotificationJson>> {
  const from = instant('start_date', query.start_date);
  const to = instant('end_date', query.end_date);
  const found = await repo.listNotifications(
    ctx.db,
    {
      ...(await whoseNotifications(ctx, query)),
      ...(query.type === undefined ? {} : { type: query.type }),
      ...(query.node_id === undefined ? {} : { nodeId: query.node_id }),
      ...(query.alert_id === undefined ? {} : { alertId: query.alert_id }),
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
    },
    page,
  );
  return { total_count: found.total_count, results: await presentAll(ctx, found.results) };
}

/**
 * Whether the caller may read a notification: their own, or, with org_notifications:read, one of their
 * organization or one below it (what their scope=org list shows). Changing anything stays the owner's.
 */
async function mayRead(ctx: ServiceContext, row: repo.NotificationRow): Promise<boolean> {
  if (row.user_id === ctx.actor.userId) return true;
  if (!ctx.actor.permissions.has('org_notifications:read')) return false;
  return isInSubtree(ctx.db, ctx.actor.orgId, row.org_id);
}

/** One notification the caller may read, with its deliveries and every attempt. */
export async function getNotification(ctx: ServiceContext, id: string) {
  const row = await repo.findNotification(ctx.db, id);
  if (row === undefined || !(await mayRead(ctx, row))) throw notFound('Notification');
  const deliveries = await repo.deliveriesOf(ctx.db, id);
  const [notification] = await presentAll(ctx, [row]);
  return {
    ...notification!,
    deliveries: deliveries.map((delivery) => ({
      id: delivery.id,
      webhook_id: delivery.webhook_id,
      status: delivery.status,
      next_attempt_at: isoUtcOrNull(delivery.next_attempt_at),
      delivered_at: isoUtcOrNull(delivery.delivered_at),
      attempts: delivery.attempts.map(presentAttempt),
    })),
  };
}
