import { contextOf } from '../../http/auth.js';
import { sendSerializedOnce } from '../../http/send-once.js';
import type { App } from '../../http/types.js';
import { IdParams, responses, SuccessMessage } from '../../http/schemas.js';
import { listSchema, pageRequest } from '../../http/lists.js';
import { acceptClientChannelForms } from './client-habits.js';
import { Alert, CreateAlertBody, EditAlertBody } from './schemas.js';
import { createAlert, deleteAlert, editAlert, getAlert, listAlerts } from './service.js';

const tags = ['alerts'];

export async function alertRoutes(app: App): Promise<void> {
  app.post(
    '/api/v1/mysubscriptions',
    {
      config: { permission: 'alerts:write' },
      schema: {
        tags,
        summary: 'Create an alert',
        description:
          'A webhook channel needs an enabled webhook of yours (disabled → 422) and counts towards ' +
          'MAX_WEBHOOK_ALERTS_PER_USER (default 10) → 422.',
        body: CreateAlertBody,
        response: responses({ 201: Alert }, [400, 401, 403, 404, 413, 415, 422]),
      },
      preValidation: acceptClientChannelForms,
    },
    async (request, reply) => reply.code(201).send(await createAlert(contextOf(request), request.body)),
  );

  app.get(
    '/api/v2/mysubscriptions',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary: "The caller's alerts",
        ...listSchema({
          item: Alert,
          order: "oldest first (creation time, then id). An alert's organization is its settings.org_id",
          ownership: 'yours',
        }),
      },
    },
    async (request, reply) =>
      sendSerializedOnce(
        reply,
        await listAlerts(contextOf(request), pageRequest(request.query), request.query.org_id),
      ),
  );

  app.get(
    '/api/v1/mysubscriptions/:id',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary: "One of the caller's alerts",
        params: IdParams,
        response: responses({ 200: Alert }, [401, 403, 404]),
      },
    },
    async (request) => getAlert(contextOf(request), request.params.id),
  );

  app.put(
    '/api/v1/mysubscriptions/:id',
    {
      config: { permission: 'alerts:write' },
      schema: {
        tags,
        summary: "Edit an alert's name, settings or channel",
        params: IdParams,
        body: EditAlertBody,
        response: responses({ 200: Alert }, [400, 401, 403, 404, 413, 415, 422]),
      },
      preValidation: acceptClientChannelForms,
    },
    async (request) => editAlert(contextOf(request), request.params.id, request.body),
  );

  app.delete(
    '/api/v1/mysubscriptions/:id',
    {
      config: { permission: 'alerts:write' },
      schema: {
        tags,
        summary: 'Delete an alert',
        params: IdParams,
        response: responses({ 200: SuccessMessage }, [401, 403, 404]),
      },
    },
    async (request) => deleteAlert(contextOf(request), request.params.id),
  );
}
