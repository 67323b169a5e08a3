import { contextOf } from '../../http/auth.js';
import { listSchema, pageRequest } from '../../http/lists.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import * as schemas from './schemas.js';
import { getNotification, listNotifications } from './service.js';
import { visibleNode } from '../fleet/nodes/service.js';

const tags = ['notifications'];

function withoutKey<T extends object, K extends keyof T>(object: T, key: K): Omit<T, K> {
  return Object.fromEntries(Object.entries(object).filter(([name]) => name !== key)) as Omit<T, K>;
}

export async function notificationRoutes(app: App): Promise<void> {
  app.get(
    '/api/v2/notification',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary:
          "The caller's notifications (one per alert of theirs and event it matched), or with scope=org " +
          "every user's in the caller's organizations",
        ...listSchema({
          item: schemas.Notification,
          order: 'newest first (created_at, then id)',
          filters: schemas.notificationFilters,
          ownership: "anyone's",
        }),
      },
    },
    async (request) => {
      const { page, size, ...query } = request.query;
      // The payload's type is a union TypeBox infers as never from a mapped list; the schema still checks it.
      return (await listNotifications(contextOf(request), query, pageRequest({ page, size }))) as never;
    },
  );

  const nodeFilters = withoutKey(schemas.notificationFilters, 'node_id');
  app.get(
    '/api/v2/notification/node/:id/event',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary: "A node's notifications: the list above for one node, at the published client's path",
        params: IdParams,
        ...listSchema({
          item: schemas.Notification,
          order: 'newest first (created_at, then id). A node you cannot see → 404',
          filters: nodeFilters,
          ownership: "anyone's",
        }),
      },
    },
    async (request) => {
      const { page, size, ...query } = request.query;
      const ctx = contextOf(request);
      await visibleNode(ctx, ctx.db, request.params.id);
      const nodeQuery = { ...query, node_id: request.params.id };
      return (await listNotifications(ctx, nodeQuery, pageRequest({ page, size }))) as never;
    },
  );

  app.get(
    '/api/v1/notification/:id',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary: 'A notification, with its webhook deliveries and every attempt',
        description:
          'One of yours; with Admin or Operator also another user’s in your organization or one below it, as ' +
          'the scope=org list shows them. Any other → 404.',
        params: IdParams,
        response: responses({ 200: schemas.NotificationWithDeliveries }, [401, 403, 404]),
      },
    },
    async (request) => (await getNotification(contextOf(request), request.params.id)) as never,
  );
}
