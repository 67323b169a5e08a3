import { Type } from 'typebox';
import { contextOf } from '../../http/auth.js';
import { sendSerializedOnce } from '../../http/send-once.js';
import type { App } from '../../http/types.js';
import { DeleteWithAlertsAnswer, IdParams, responses } from '../../http/schemas.js';
import { foldAlias } from '../../http/aliases.js';
import * as schemas from './schemas.js';
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, updateWebhook } from './service.js';
import { rotateSecret } from './rotation.js';
import { PREVIOUS_SECRET_OVERLAP_S } from './secrets.js';
import { testWebhook } from './test-send.js';
import { verifyWebhook } from './verify.js';

const tags = ['webhooks'];

export async function webhookRoutes(app: App): Promise<void> {
  app.post(
    '/api/v1/webhook',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Register a webhook (created disabled; verify it to enable)',
        description: 'At most MAX_WEBHOOKS_PER_USER (default 3) per user → 422.',
        body: schemas.CreateWebhookBody,
        response: responses({ 201: schemas.WebhookWithSecret }, [400, 401, 403, 413, 415, 422]),
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await createWebhook(contextOf(request), foldAlias(request.body, 'Header', 'headers'))),
  );

  app.post(
    '/api/v1/webhook/:id/verify',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Prove ownership of the endpoint with a signed challenge',
        description:
          'GET {url}?challenge=<random> with the extra headers and X-Service-Timestamp (ms since epoch). The ' +
          'endpoint must answer within 3 s with 200 and {"challenge": "<same>", "challenge_response": ' +
          '"<lower-hex HMAC-SHA256(secret, timestamp + \\".\\" + challenge)>"}. SUCCESS enables the webhook; ' +
          'FAILED says which check failed. Already enabled → 409.',
        params: IdParams,
        response: responses({ 200: schemas.VerifyAnswer }, [401, 403, 404, 409]),
      },
    },
    async (request) => verifyWebhook(contextOf(request), request.params.id),
  );

  app.post(
    '/api/v1/webhook/:id/rotate-secret',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Replace the secret with a generated one; the old one keeps signing for a while',
        description:
          'Answers the new secret, once. Until expire_previous_after_s (default 86400, at most 2592000; 0 ' +
          'stops the old secret at once) has passed, every request is signed with both secrets, the new one ' +
          'first: X-Service-Signature: v1=<hex with the new>,<hex with the old>, and webhook-signature (for ' +
          'whsec_ secrets; the new one always is): v1,<base64 with the new> v1,<base64 with the old> ' +
          '(space-separated, as Standard Webhooks allows). ' +
          'A verify accepts a challenge_response made with either. Rotating again during the overlap keeps ' +
          'only the newest previous secret. The webhook stays enabled or disabled as it was; the old secret ' +
          'is never answered again. The body is optional: without one, or with {}, the default applies.',
        params: IdParams,
        body: schemas.RotateSecretBody,
        response: responses({ 200: schemas.RotatedSecret }, [400, 401, 403, 404, 413, 415]),
      },
      // No body at all is the same as `{}`; a JSON `null` or any other non-object is still refused.
      preValidation: (request, _reply, done) => {
        if (request.body === undefined) request.body = {};
        done();
      },
    },
    async (request) =>
      rotateSecret(
        contextOf(request),
        request.params.id,
        request.body.expire_previous_after_s ?? PREVIOUS_SECRET_OVERLAP_S.default,
      ),
  );

  app.put(
    '/api/v1/webhook/:id',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Edit a webhook (disables it until verified again; returns the secret)',
        params: IdParams,
        body: schemas.UpdateWebhookBody,
        response: responses({ 200: schemas.WebhookWithSecret }, [400, 401, 403, 404, 413, 415, 422]),
      },
    },
    async (request) =>
      updateWebhook(contextOf(request), request.params.id, foldAlias(request.body, 'Header', 'headers')),
  );

  // The reference's path, then the published client's.
  for (const [url, alias] of [
    ['/api/v2/webhook', false],
    ['/api/v1/webhook', true],
  ] as const) {
    app.get(
      url,
      {
        config: { permission: 'webhooks:read' },
        schema: {
          tags,
          summary: "The caller's webhooks (a JSON array, oldest first)",
          description: alias
            ? 'The same list as GET /api/v2/webhook, at the path the published client uses.'
            : 'A bare JSON array, as the reference has it (not paged: a user has at most MAX_WEBHOOKS_PER_USER).',
          // The client's own path stays as lenient as it always was: parameters it does not know are ignored.
          querystring: Type.Object(schemas.webhookListScope, { additionalProperties: alias }),
          response: responses({ 200: Type.Array(schemas.Webhook) }, [400, 401, 403, 404]),
        },
      },
      async (request, reply) =>
        sendSerializedOnce(reply, await listWebhooks(contextOf(request), request.query.org_id)),
    );
  }

  app.get(
    '/api/v1/webhook/:id',
    {
      config: { permission: 'webhooks:read' },
      schema: {
        tags,
        summary: "One of the caller's webhooks",
        params: IdParams,
        response: responses({ 200: schemas.Webhook }, [401, 403, 404]),
      },
    },
    async (request) => getWebhook(contextOf(request), request.params.id),
  );

  app.post(
    '/api/v1/webhook/:id/test',
    {
      config: { permission: 'webhooks:write' },
      schema: {
        tags,
        summary: 'Send one signed sample notification and report the answer',
        description:
          'Disabled webhook → 422. Otherwise POSTs a sample notification of alert_type (signed like real ' +
          'notifications; body: components.schemas.Notification), waits at most 5 s, never retries, and never counts ' +
          'towards the failures that disable a webhook.',
        params: IdParams,
        body: schemas.TestBody,
        response: responses({ 200: schemas.TestAnswer }, [400, 401, 403, 404, 413, 415, 422]),
      },
    },
    async (request) => testWebhook(contextOf(request), request.params.id, request.body.alert_type),
  );

  for (const [url, alias] of [
    ['/api/v1/user/webhook/:id', false],
    ['/api/v1/webhook/:id', true],
  ] as const) {
    app.delete(
      url,
      {
        config: { permission: 'webhooks:write' },
        schema: {
          tags,
          summary: 'Remove a webhook',
          description:
            'Used by alerts and no force=true → 409, nothing removed. With force=true the alerts using it are ' +
            'removed too, in the same transaction, and listed in removed_alert_ids.' +
            (alias
              ? " The same operation as DELETE /api/v1/user/webhook/{id}, at the published client's path."
              : ''),
          params: IdParams,
          querystring: schemas.DeleteQuery,
          response: responses({ 200: DeleteWithAlertsAnswer }, [400, 401, 403, 404, 409]),
        },
      },
      async (request) => deleteWebhook(contextOf(request), request.params.id, request.query.force === 'true'),
    );
  }
}
