import { Type } from 'typebox';
import { aliasDescription } from '../../http/aliases.js';
import { forceQuery } from '../../http/schemas.js';
import { NOTIFICATION_TYPES } from '../notifications/types.js';
import { PREVIOUS_SECRET_OVERLAP_S } from './secrets.js';

const StringMap = (description: string, maxProperties: number, valueMax: number) =>
  Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ maxLength: valueMax }), {
    maxProperties,
    description,
  });

const fields = {
  name: Type.String({ minLength: 1, maxLength: 128 }),
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description:
      'https:// URL of the endpoint, without user name or password. A literal non-public address is refused ' +
      '(422); names are resolved and checked at every call.',
  }),
  metadata: Type.Object(
    {
      labels: Type.Optional(
        StringMap('Identifying labels (at most 32, values up to 256 characters).', 32, 256),
      ),
    },
    { additionalProperties: false },
  ),
  Header: Type.Record(Type.String(), Type.String(), {
    description:
      'Extra headers sent with every call: at most 3, names and values together at most 2,048 characters, ' +
      'names are HTTP tokens, values only printable ASCII, spaces and tabs; Host, Content-Length, ' +
      'Content-Type, Transfer-Encoding, Connection, User-Agent, the hop-by-hop Upgrade, Keep-Alive, Expect, ' +
      'TE, Trailer and Proxy-Connection, and every X-Service-* and webhook-* name are refused.',
  }),
  secret: Type.String({
    pattern: '^[\\x21-\\x7E]{16,256}$',
    description:
      '16–256 printable ASCII characters without spaces. Generated when omitted: whsec_ and the base64 of 32 random bytes, ' +
      'which also signs every request with the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature).',
  }),
};

const headersAlias = { ...fields.Header, description: aliasDescription('Header') };

export const CreateWebhookBody = Type.Object(
  {
    name: fields.name,
    url: fields.url,
    metadata: Type.Optional(fields.metadata),
    Header: Type.Optional(fields.Header),
    headers: Type.Optional(headersAlias),
    secret: Type.Optional(fields.secret),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    url: Type.Optional(fields.url),
    metadata: Type.Optional(fields.metadata),
    Header: Type.Optional(fields.Header),
    headers: Type.Optional(headersAlias),
    secret: Type.Optional(fields.secret),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'At least one field; any edit disables the webhook.',
  },
);

export const WebhookWithSecret = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  is_enabled: Type.Boolean({ description: 'Always false here: a new or edited webhook must be verified.' }),
  secret: Type.String({ description: 'Store it: it signs challenges and notifications. Only shown here.' }),
});

export const Webhook = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  metadata: Type.Object({ labels: Type.Record(Type.String(), Type.String()) }),
  headers: Type.Record(Type.String(), Type.String()),
  is_enabled: Type.Boolean(),
  disabled_reason: Type.Union(
    [
      Type.Literal('unverified'),
      Type.Literal('edited'),
      Type.Literal('failing'),
      Type.Literal('gone'),
      Type.Null(),
    ],
    {
      description: 'Why the webhook is disabled; null when enabled.',
    },
  ),
  created_at: Type.String({ description: 'ISO 8601, UTC.' }),
  created_by: Type.Object({ id: Type.String(), name: Type.String() }),
  subscription_count: Type.Integer({ description: 'How many alerts use this webhook now.' }),
});

export const RotateSecretBody = Type.Object(
  {
    expire_previous_after_s: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: PREVIOUS_SECRET_OVERLAP_S.max,
        default: PREVIOUS_SECRET_OVERLAP_S.default,
        description:
          'How long the replaced secret keeps signing beside the new one, in seconds: 0 (it stops at once) to ' +
          `${PREVIOUS_SECRET_OVERLAP_S.max} (30 days); default ${PREVIOUS_SECRET_OVERLAP_S.default} (one day).`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const RotatedSecret = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  is_enabled: Type.Boolean({ description: 'As it was: a rotation neither disables nor needs a verify.' }),
  secret: Type.String({ description: 'The new secret. Store it: only shown here.' }),
  previous_secret_expires_at: Type.Union([Type.String(), Type.Null()], {
    description:
      'ISO 8601, UTC: until then every request is signed with the replaced secret as well; null when it ' +
      'stopped at once (expire_previous_after_s 0).',
  }),
});

export const VerifyAnswer = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('SUCCESS'), Type.Literal('FAILED')]),
  message: Type.String({ description: 'On FAILED, exactly which check failed.' }),
});

export const TestBody = Type.Object(
  { alert_type: Type.Union(NOTIFICATION_TYPES.map((type) => Type.Literal(type))) },
  { additionalProperties: false },
);

export const TestAnswer = Type.Object({
  status: Type.Union([Type.Integer(), Type.Null()], {
    description: "The endpoint's HTTP status; null when none came.",
  }),
  response: Type.Unknown({
    description:
      "The endpoint's body: parsed JSON when it is JSON, else text (at most 64 KiB read); null when none came.",
  }),
  error: Type.Optional(
    Type.String({ description: 'Why no HTTP answer came (timeout, refused, TLS, blocked address).' }),
  ),
});

export const DeleteQuery = forceQuery(
  'true removes the alerts that use the webhook too, in one transaction.',
);

/** The published client's org_id and own on the webhook list (docs/rules/api.md#list-scope). */
export const webhookListScope = {
  org_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'Your organization (all your webhooks) or one below it (none: a webhook belongs to its owner’s); another → 404.',
    }),
  ),
  own: Type.Optional(
    Type.Boolean({ description: 'Accepted for the published client: these webhooks are always your own.' }),
  ),
};
