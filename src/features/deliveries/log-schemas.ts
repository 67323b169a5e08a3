import { Type } from 'typebox';
import { InstantQuery } from '../../http/instants.js';
import { CURRENT_NAMES, Named, NamedResource } from '../notifications/names-schema.js';

export const DeliveryStatus = Type.Union(
  [
    Type.Literal('pending'),
    Type.Literal('delivered'),
    Type.Literal('failed'),
    Type.Literal('held'),
    Type.Literal('expired'),
  ],
  {
    description:
      'pending (on its way, or waiting for its webhook to be retried), delivered, failed, held (the webhook is ' +
      'disabled; sent once it is verified again), expired (held for too long; send it again with retry).',
  },
);

const instantOrNull = (description: string) =>
  Type.Union([Type.String({ description: `${description}, ISO 8601 UTC.` }), Type.Null()]);

export const DeliveryLogEntry = Type.Object({
  id: Type.String({ description: 'Sent as X-Service-Delivery; the same on every attempt and every replay.' }),
  notification_id: Type.String(),
  alert: Type.Object({ id: Type.String(), name: Type.String() }),
  type: Type.String({ description: 'The notification type.' }),
  organization: Type.Object(Named.properties, { description: CURRENT_NAMES }),
  node: Type.Object(Named.properties, { description: CURRENT_NAMES }),
  resource: NamedResource,
  status: DeliveryStatus,
  attempts: Type.Integer({
    minimum: 0,
    description: 'Requests recorded so far: one per entry of the attempt log.',
  }),
  last_attempt_at: instantOrNull('When the last request started'),
  next_attempt_at: instantOrNull('When the next request is due (pending only)'),
  last_status_code: Type.Union([Type.Integer(), Type.Null()], {
    description: "The last answer's HTTP status; null when none came (or no request yet).",
  }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last request failed.' }),
  created_at: Type.String({ description: 'ISO 8601 UTC.' }),
  delivered_at: instantOrNull('When a 2xx answer arrived'),
});

export const DeliveryAttempt = Type.Object({
  at: Type.String({ description: 'When the request started, ISO 8601 UTC.' }),
  duration_ms: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  failure: Type.Union([Type.String(), Type.Null()], {
    description:
      'dns, blocked_address, tls, timeout, refused, bad_status, bad_request, unexpected (anything else that went wrong, the reason in error); null for a success.',
  }),
  error: Type.Union([Type.String(), Type.Null()]),
  response: Type.Union([Type.String(), Type.Null()], { description: 'The first KiB of the answer.' }),
});

export const DeliveryWithAttempts = Type.Object({
  ...DeliveryLogEntry.properties,
  attempt_log: Type.Array(DeliveryAttempt, { description: 'Every request, oldest first.' }),
});

export const deliveryLogFilters = {
  status: Type.Optional(DeliveryStatus),
  start_date: Type.Optional(InstantQuery),
  end_date: Type.Optional(InstantQuery),
};

export const DeliveryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  delivery_id: Type.String({ minLength: 1, maxLength: 64 }),
});

export const ReplayBody = Type.Object(
  {
    since: Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'ISO 8601, or epoch milliseconds: deliveries made at or after it are sent again.',
    }),
  },
  { additionalProperties: false },
);

export const ReplayAnswer = Type.Object({
  queued: Type.Integer({ minimum: 0, description: 'Deliveries queued to be sent again.' }),
});
