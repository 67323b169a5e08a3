import { Type } from 'typebox';
import { InstantQuery } from '../../http/instants.js';
import { DeliveryAttempt } from '../deliveries/log-schemas.js';
import { CURRENT_NAMES, Named, NamedResource } from './names-schema.js';
import { NotificationSchema } from './payload-schema.js';
import { NOTIFICATION_TYPES } from './types.js';
import { ChannelTypeAnswer } from '../alerts/schemas.js';

const Status = Type.Union(
  ['pending', 'delivered', 'failed', 'held', 'expired', 'suppressed', 'cancelled', 'grouped'].map((status) =>
    Type.Literal(status),
  ),
  {
    description:
      'pending (on its way, or waiting for a retry), delivered, failed (the e-mail gave up), held (its webhook ' +
      'is disabled; sent once it is verified again), expired (held too long), suppressed (not sent, see reason), ' +
      'cancelled (its webhook or channel was deleted before it went out; reason webhook_deleted), grouped ' +
      '(it joined the incident incident_id names, whose messages went out instead).',
  },
);

export const Notification = Type.Object({
  id: Type.String(),
  status: Status,
  reason: Type.Union([Type.String(), Type.Null()], {
    description:
      'Why it was suppressed (maintenance: a window covered it; node_unreachable: its node, or its tunnel’s ' +
      'peer, was UNREACHABLE; nothing_firing: a grouped alert’s return to good with no incident member to ' +
      'recover), expired (held_too_long) or cancelled (webhook_deleted). With status grouped, ' +
      'node_unreachable: folded into its incident, counted in behind_unreachable.',
  }),
  incident_id: Type.Union([Type.String(), Type.Null()], {
    description:
      'The incident it joined (status grouped): its alert groups notifications, and the incident’s ' +
      'messages are what went out (GET /api/v1/incident/{id}).',
  }),
  silence_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The maintenance window that held it back (it may have been sent when the window ended).',
  }),
  alert: Type.Object({ id: Type.String(), name: Type.String() }),
  owner: Type.Object(Named.properties, {
    description: 'The user whose alert it is (in scope=org lists, often not the caller).',
  }),
  type: Type.String(),
  condition: Type.String(),
  event_id: Type.String(),
  organization: Type.Object(Named.properties, { description: CURRENT_NAMES }),
  node: Type.Object(Named.properties, { description: CURRENT_NAMES }),
  resource: NamedResource,
  channel_type: ChannelTypeAnswer,
  webhook_id: Type.Union([Type.String(), Type.Null()]),
  occurred_at: Type.String({ description: 'When the event happened, ISO 8601 UTC.' }),
  created_at: Type.String({ description: 'When the notification was made, ISO 8601 UTC.' }),
  payload: NotificationSchema,
});

export const Delivery = Type.Object({
  id: Type.String({ description: 'Sent as X-Service-Delivery; the same on every retry.' }),
  webhook_id: Type.String(),
  status: Type.String(),
  attempts: Type.Array(DeliveryAttempt, { description: 'Oldest first.' }),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
  delivered_at: Type.Union([Type.String(), Type.Null()]),
});

export const NotificationWithDeliveries = Type.Object({
  ...Notification.properties,
  deliveries: Type.Array(Delivery, { description: 'Webhook deliveries; empty for an e-mail notification.' }),
});

export const notificationFilters = {
  scope: Type.Optional(
    Type.Union([Type.Literal('mine'), Type.Literal('org')], {
      default: 'mine',
      description:
        "mine: the caller's own notifications (those of their alerts). org: every user's notifications in the " +
        "caller's organization and those below it, for Admin and Operator (another role → 403); org_id then " +
        'narrows within it, and one outside it → 404. Reading one (GET /api/v1/notification/{id}) follows the ' +
        'same rule; sending again stays with the owner.',
    }),
  ),
  type: Type.Optional(Type.Union(NOTIFICATION_TYPES.map((type) => Type.Literal(type)))),
  node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  org_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'The organization and those below it.' }),
  ),
  alert_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  status: Type.Optional(Status),
  start_date: Type.Optional(InstantQuery),
  end_date: Type.Optional(InstantQuery),
};
