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
        summary:
          "The caller's notifications (one per alert of theirs and event it matched), or with scope=org " +
          "every user's in the caller's organizations",
        ...listSchema({
          item: schemas.Notification,
          order: 'newest first (created_at, then id)',
          filters: schemas.notificationFilters,
          errors: [404],
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
