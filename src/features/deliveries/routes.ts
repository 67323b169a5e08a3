import { contextOf } from '../../http/auth.js';
import { listSchema, pageRequest } from '../../http/lists.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { CHANNELS, WEBHOOK, type Kinds } from '../webhooks/repo.js';
import * as schemas from './log-schemas.js';
import { getWebhookDelivery, listWebhookDeliveries, replayWebhook, retryDelivery } from './log-service.js';

/** The delivery log of a webhook or a channel: every notification sent to it, every request, and sending again. */
export async function deliveryLogRoutes(app: App): Promise<void> {
  await logRoutes(app, 'webhook', WEBHOOK);
  await logRoutes(app, 'channel', CHANNELS);
}

async function logRoutes(app: App, endpoint: 'webhook' | 'channel', kinds: Kinds): Promise<void> {
  const tags = [`${endpoint}s`];
  const OWN = `The ${endpoint} must be one of yours (another user’s → 404).`;
  app.get(
    `/api/v1/${endpoint}/:id/deliveries`,
    {
      config: { permission: 'webhooks:read' },
      schema: {
        tags,
        summary: `A ${endpoint}'s deliveries: one per notification sent to it`,
        params: IdParams,
        ...listSchema({
          item: schemas.DeliveryLogEntry,
          order: `newest first (created_at, then id). Dates filter created_at. ${OWN}`,
          filters: schemas.deliveryLogFilters,
          errors: [404],
        }),
      },
    },
    async (request) => {
      const { page, size, ...query } = request.query;
      const paging = pageRequest({ page, size });
      return listWebhookDeliveries(contextOf(request), request.params.id, query, paging, kinds);
    },
  );

  app.get(
    `/api/v1/${endpoint}/:id/deliveries/:delivery_id`,
    {
      config: { permission: 'webhooks:read' },
      schema: {
        tags,
        summary: `One delivery of a ${endpoint}, with every request made for it`,
        description: OWN,
        params: schemas.DeliveryParams,
        response: responses({ 200: schemas.DeliveryWithAttempts }, [401, 403, 404]),
      },
    },
    async (request) =>
      getWebhookDelivery(contextOf(request), request.params.id, request.params.delivery_id, kinds),
  );

  app.post(
    `/api/v1/${endpoint}/:id/deliveries/:delivery_id/retry`,
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Send a failed, expired or waiting delivery again, now',
        description:
          'The same delivery id (X-Service-Delivery), so a receiver that has it already recognizes it. A failed ' +
          "or expired delivery, or a pending one waiting for the webhook's retry time, is the webhook's next " +
          'request, at once, even before that time (while the webhook is failing it is still the only request in ' +
          'flight). A disabled webhook → 422 (verify it first: that sends what it held); a delivery that is held ' +
          `or delivered → 409 (a delivered one is sent again by a replay). ${OWN}`,
        params: schemas.DeliveryParams,
        response: responses({ 202: schemas.DeliveryLogEntry }, [401, 403, 404, 409, 422]),
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await retryDelivery(contextOf(request), request.params.id, request.params.delivery_id, kinds)),
  );

  app.post(
    `/api/v1/${endpoint}/:id/replay`,
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: `Send again every notification sent to the ${endpoint} since a time`,
        description:
          'For a receiver that lost what it received: every delivery made at or after since that was delivered, ' +
          'failed or expired is queued again, oldest first, each with its own delivery id (receivers that ' +
          'deduplicate recognize what they have). Pending and held deliveries are on their way already and are ' +
          `not counted. A disabled webhook → 422. ${OWN}`,
        params: IdParams,
        body: schemas.ReplayBody,
        response: responses({ 202: schemas.ReplayAnswer }, [400, 401, 403, 404, 413, 415, 422]),
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await replayWebhook(contextOf(request), request.params.id, request.body.since, kinds)),
  );
}
