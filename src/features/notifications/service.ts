import type { AlertChannelType } from '../../db/types.js';
import type { ServiceContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import { instant } from '../../http/instants.js';
import { mapPage, type Page, type PageRequest } from '../../http/lists.js';
import { isoUtc, isoUtcOrNull } from '../../lib/clock.js';
import type { NotificationPayload } from './payload.js';
import { presentAttempt } from '../deliveries/log-service.js';
import * as repo from './repo.js';

export interface NotificationListQuery {
  type?: string;
  node_id?: string;
  org_id?: string;
  alert_id?: string;
  status?: string;
  start_date?: string;
  end_date?: string;
}

function present(row: repo.NotificationRow) {
  return {
    id: row.id,
    status: row.status,
    reason: row.reason,
    silence_id: row.silence_id,
    digest_id: row.digest_id,
    alert: { id: row.alert_id, name: row.alert_name },
    type: row.type,
    condition: row.condition,
    event_id: row.event_id,
    organization: { id: row.org_id },
    node: { id: row.node_id },
    channel_type: row.channel_type.toUpperCase() as Uppercase<AlertChannelType>,
    webhook_id: row.webhook_id,
    occurred_at: isoUtc(row.occurred_at),
    created_at: isoUtc(row.created_at),
    payload: JSON.parse(row.payload) as NotificationPayload,
  };
}

export type NotificationJson = ReturnType<typeof present>;

/** The caller's own notifications (those of their alerts), newest first. */
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
      userId: ctx.actor.userId,
      ...(query.type === undefined ? {} : { type: query.type }),
      ...(query.node_id === undefined ? {} : { nodeId: query.node_id }),
      ...(query.org_id === undefined ? {} : { orgId: query.org_id }),
      ...(query.alert_id === undefined ? {} : { alertId: query.alert_id }),
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
    },
    page,
  );
  return mapPage(found, present);
}

/** One of the caller's notifications with its deliveries and every attempt. */
export async function getNotification(ctx: ServiceContext, id: string) {
  const row = await repo.findOwnNotification(ctx.db, id, ctx.actor.userId);
  if (row === undefined) throw notFound('Notification');
  const deliveries = await repo.deliveriesOf(ctx.db, id);
  return {
    ...present(row),
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
