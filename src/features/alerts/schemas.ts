import { Type } from 'typebox';
import { NOTIFICATION_TYPES } from '../../notifications/types.js';
import { MAX_DURATION_MINUTES } from './rules.js';

const AlertName = Type.String({ minLength: 1, maxLength: 128 });

export const AlertType = Type.Union(
  NOTIFICATION_TYPES.map((type) => Type.Literal(type)),
  { description: 'What to watch.' },
);

export const Settings = Type.Object(
  {
    org_id: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "Organization whose resources are watched: the caller's or one below it (else 404).",
    }),
    alert_me: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'Comma-separated states that trigger the alert. Required for the state types: NODE_STATE_CHANGE ' +
          '(ALIVE, UNREACHABLE), TUNNEL_STATE_CHANGE (CONNECTED, DISCONNECTED), SERVICE_STATE_CHANGE ' +
          '(HEALTHY, UNHEALTHY); refused for the others.',
      }),
    ),
    duration: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_DURATION_MINUTES,
        description:
          'Minutes the condition must hold (0 to 10080). Only for NODE_STATE_CHANGE, TUNNEL_STATE_CHANGE, ' +
          'SERVICE_STATE_CHANGE and NODE_IP_CHANGE; defaults to 0. Returned as a string.',
      }),
    ),
    include_child: Type.Optional(
      Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')], {
        description: 'Also watch every organization below org_id. Defaults to true. Returned as a string.',
      }),
    ),
  },
  { additionalProperties: false },
);

const ChannelType = Type.Union([Type.Literal('email'), Type.Literal('webhook')], {
  description: 'Lower case in requests; email when omitted.',
});
const ChannelId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'Id of one of your enabled webhooks; only with channel_type webhook.',
});

export const CreateAlertBody = Type.Object(
  {
    name: AlertName,
    type: AlertType,
    settings: Settings,
    channel_type: Type.Optional(ChannelType),
    channel_id: Type.Optional(ChannelId),
  },
  { additionalProperties: false },
);

export const EditAlertBody = Type.Object(
  {
    name: Type.Optional(AlertName),
    settings: Type.Optional(Settings),
    channel_type: Type.Optional(ChannelType),
    channel_id: Type.Optional(ChannelId),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Any of name, settings (replaced whole) and channel. Naming channel_type or channel_id replaces the channel ' +
      '(channel_type defaults to email then). The edited alert must pass every rule of creation.',
  },
);

export const Alert = Type.Object({
  metadata: Type.Object({
    labels: Type.Object({ '_service.alert.name': Type.String({ description: 'Display name of the type.' }) }),
  }),
  name: Type.String(),
  type: Type.String(),
  settings: Type.Object({
    org_id: Type.String(),
    alert_me: Type.Optional(Type.String()),
    duration: Type.Optional(Type.String()),
    include_child: Type.String({ description: '"true" or "false".' }),
  }),
  id: Type.String(),
  display_type: Type.String(),
  channel_type: Type.Union([Type.Literal('EMAIL'), Type.Literal('WEBHOOK')]),
  channel: Type.Object({
    id: Type.String({ description: "The webhook id, or the id of the user's e-mail channel." }),
    name: Type.String({ description: 'The webhook name, or "Email".' }),
  }),
  created_at: Type.String({ description: 'ISO 8601 with offset, e.g. 2026-01-02T03:04:05.678+00:00.' }),
  created_by: Type.Object({ id: Type.String(), name: Type.String() }),
});
