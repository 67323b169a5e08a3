import { Type } from 'typebox';
import { CHANNEL_TYPES } from '../../db/types.js';
import { forceQuery } from '../../http/schemas.js';

const secretField = (what: string) =>
  `${what} It is a secret: sealed at rest, never logged, and answered only masked (its host and last 4 characters).`;

const fields = {
  name: Type.String({ minLength: 1, maxLength: 128 }),
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: secretField(
      'slack and msteams: the incoming-webhook (Slack) or Workflows webhook (Teams) https:// URL. The rules of a ' +
        "webhook's URL apply: https only, no user name or password, a literal non-public address refused (422), " +
        'names resolved and checked at every call, no redirects.',
    ),
  }),
  routing_key: Type.String({
    pattern: '^[A-Za-z0-9]{20,64}$',
    description: secretField('pagerduty: the integration (routing) key of an Events API v2 integration.'),
  }),
};

export const ChannelTypeField = Type.Union(
  [Type.Literal(CHANNEL_TYPES[0]), Type.Literal(CHANNEL_TYPES[1]), Type.Literal(CHANNEL_TYPES[2])],
  { description: 'slack (url), msteams (url) or pagerduty (routing_key).' },
);

export const CreateChannelBody = Type.Object(
  {
    name: fields.name,
    type: ChannelTypeField,
    url: Type.Optional(fields.url),
    routing_key: Type.Optional(fields.routing_key),
  },
  { additionalProperties: false },
);

export const UpdateChannelBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    url: Type.Optional(fields.url),
    routing_key: Type.Optional(fields.routing_key),
  },
  { additionalProperties: false },
);

export const Channel = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: ChannelTypeField,
  target: Type.String({
    description:
      'The URL or routing key, masked: the host and the last 4 characters (hooks.slack.com …wxyz).',
  }),
  is_enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.Literal('failing'), Type.Literal('gone'), Type.Null()], {
    description:
      'Why the channel is disabled: failing (10 failed requests in a row) or gone (it answered 410). A ' +
      'successful test enables it again and sends what it held. Null when enabled.',
  }),
  created_at: Type.String({ description: 'ISO 8601, UTC.' }),
  subscription_count: Type.Integer({ description: 'How many alerts use this channel now.' }),
});

export const DeleteQuery = forceQuery(
  'true removes the alerts that use the channel too, in one transaction.',
);
