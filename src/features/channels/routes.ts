import { contextOf } from '../../http/auth.js';
import { listSchema, pageOf, pageRequest } from '../../http/lists.js';
import { DeleteWithAlertsAnswer, IdParams, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { TestAnswer, TestBody } from '../webhooks/schemas.js';
import * as schemas from './schemas.js';
import {
  createChannel,
  deleteChannel,
  getChannel,
  listChannels,
  testChannel,
  updateChannel,
} from './service.js';

const tags = ['channels'];
const OWN = 'Another user’s channel → 404.';

/** Slack, Microsoft Teams and PagerDuty contact points: created enabled, delivered through the webhooks' engine. */
export async function channelRoutes(app: App): Promise<void> {
  app.post(
    '/api/v1/channel',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Add a Slack, Microsoft Teams or PagerDuty channel (enabled at once)',
        description:
          'slack and msteams take url, pagerduty takes routing_key; the other field → 400. At most ' +
          'MAX_CHANNELS_PER_USER (default 10) per user → 422. The answer shows the target masked.',
        body: schemas.CreateChannelBody,
        response: responses({ 201: schemas.Channel }, [400, 401, 403, 413, 415, 422]),
      },
    },
    async (request, reply) => reply.code(201).send(await createChannel(contextOf(request), request.body)),
  );

  app.get(
    '/api/v2/channel',
    {
      config: { permission: 'webhooks:read' },
      schema: {
        tags,
        summary: "The caller's channels",
        ...listSchema({
          item: schemas.Channel,
          order: 'oldest first (created_at, then id)',
          ownership: 'yours',
        }),
      },
    },
    async (request) =>
      pageOf(await listChannels(contextOf(request), request.query.org_id), pageRequest(request.query)),
  );

  app.get(
    '/api/v1/channel/:id',
    {
      config: { permission: 'webhooks:read' },
      schema: {
        tags,
        summary: "One of the caller's channels",
        description: OWN,
        params: IdParams,
        response: responses({ 200: schemas.Channel }, [401, 403, 404]),
      },
    },
    async (request) => getChannel(contextOf(request), request.params.id),
  );

  app.put(
    '/api/v1/channel/:id',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Rename a channel or give it a new URL or routing key (of its own type)',
        description: `Its type cannot change. Nothing given → 400. ${OWN}`,
        params: IdParams,
        body: schemas.UpdateChannelBody,
        response: responses({ 200: schemas.Channel }, [400, 401, 403, 404, 413, 415, 422]),
      },
    },
    async (request) => updateChannel(contextOf(request), request.params.id, request.body),
  );

  app.post(
    '/api/v1/channel/:id/test',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Send one sample notification of alert_type in the channel’s shape and report the answer',
        description:
          'Waits at most 5 s, never retries and never counts towards the failures that disable a channel. A ' +
          `2xx answer to the test of a disabled channel enables it again and sends what it held. ${OWN}`,
        params: IdParams,
        body: TestBody,
        response: responses({ 200: TestAnswer }, [400, 401, 403, 404, 413, 415]),
      },
    },
    async (request) => testChannel(contextOf(request), request.params.id, request.body.alert_type),
  );

  app.delete(
    '/api/v1/channel/:id',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Remove a channel',
        description:
          'Used by alerts and no force=true → 409, nothing removed. With force=true the alerts using it are ' +
          `removed too, in the same transaction, and listed in removed_alert_ids. ${OWN}`,
        params: IdParams,
        querystring: schemas.DeleteQuery,
        response: responses({ 200: DeleteWithAlertsAnswer }, [400, 401, 403, 404, 409]),
      },
    },
    async (request) => deleteChannel(contextOf(request), request.params.id, request.query.force === 'true'),
  );
}
