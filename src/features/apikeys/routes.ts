import { Type } from 'typebox';
import { contextOf } from '../../http/auth.js';
import { isoUtc } from '../../lib/clock.js';
import type { App } from '../../http/types.js';
import { IdParams, responses, SuccessMessage } from '../../http/schemas.js';
import { listSchema, mapPage, pageRequest } from '../../http/lists.js';
import { createOwnApiKey, listOwnApiKeys, revokeOwnApiKey } from './service.js';

const ApiKeyInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart.' }),
  created_at: Type.String({ description: 'ISO 8601, UTC.' }),
});

const CreatedKey = Type.Object({
  ...ApiKeyInfo.properties,
  key: Type.String({ description: 'The key itself. Shown only in this answer; store it now.' }),
});

export async function apiKeyRoutes(app: App): Promise<void> {
  app.post(
    '/api/v1/apikey',
    {
      config: { permission: 'apikeys:own' },
      schema: {
        tags: ['apikeys'],
        summary: 'Create an API key for the caller',
        description: 'The body is optional: without one, or with `{}`, the key gets a default name.',
        body: Type.Object(
          { name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })) },
          { additionalProperties: false },
        ),
        response: responses({ 201: CreatedKey }, [400, 401, 403, 413, 415]),
      },
      // No body at all is the same as `{}`; a JSON `null` or any other non-object is still refused.
      preValidation: (request, _reply, done) => {
        if (request.body === undefined) request.body = {};
        done();
      },
    },
    async (request, reply) => {
      const issued = await createOwnApiKey(contextOf(request), request.body.name);
      return reply.code(201).send({ ...issued, created_at: isoUtc(issued.created_at) });
    },
  );

  app.get(
    '/api/v2/apikey',
    {
      config: { permission: 'apikeys:own' },
      schema: {
        tags: ['apikeys'],
        summary: "List the caller's active API keys (without the keys themselves)",
        ...listSchema({ item: ApiKeyInfo, order: 'oldest first', ownership: 'yours' }),
      },
    },
    async (request) => {
      const keys = await listOwnApiKeys(contextOf(request), pageRequest(request.query), request.query.org_id);
      return mapPage(keys, (key) => ({ ...key, created_at: isoUtc(key.created_at) }));
    },
  );

  app.delete(
    '/api/v1/apikey/:id',
    {
      config: { permission: 'apikeys:own' },
      schema: {
        tags: ['apikeys'],
        summary: "Revoke one of the caller's API keys",
        description:
          'Takes effect at once, in every instance sharing the database. Another user’s key, an unknown one ' +
          'or one already revoked answers 404.',
        params: IdParams,
        response: responses({ 200: SuccessMessage }, [401, 403, 404]),
      },
    },
    async (request) => {
      await revokeOwnApiKey(contextOf(request), request.params.id);
      return { id: request.params.id, message: 'The API key has been revoked.', status: 'SUCCESS' as const };
    },
  );
}
