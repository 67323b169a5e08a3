import { contextOf } from '../../http/auth.js';
import { listSchema, pageRequest } from '../../http/lists.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import * as schemas from './schemas.js';
import { getNotification, listNotifications } from './service.js';

const tags = ['notifications'];

export async function notificationRoutes(app: App): Promise<void> {
  app.get(
    '/api/v2/notification',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary: "The caller's notifications: one per alert of theirs and event it matched",
        ...listSchema({
          item: schemas.Notification,
          order: 'newest first (created_at, then id)',
          filters: schemas.notificationFilters,
        }),
      },
    },
    async (request) => {
      const { page, size, ...query } = request.query;
      // The payload's type is a union TypeBox infers as never from a mapped list; the schema still checks it.
      return (await listNotifications(contextOf(request), query, pageRequest({ page, size }))) as never;
    },
  );

  app.get(
    '/api/v1/notification/:id',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary: 'One of your notifications, with its webhook deliveries and every attempt',
        params: IdParams,
        response: responses({ 200: schemas.NotificationWithDeliveries }, [401, 403, 404]),
      },
    },
    async (request) => (await getNotification(contextOf(request), request.params.id)) as never,
  );
}
