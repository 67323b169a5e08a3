import { Type } from 'typebox';
import { NOTIFICATION_TYPES } from './types.js';

/** The notification body as an OpenAPI component (the test operation and every notification send it). */
export const NotificationSchema = Type.Object(
  {
    id: Type.String({ description: 'Event id; the same event sent to several channels keeps it.' }),
    type: Type.Union(NOTIFICATION_TYPES.map((type) => Type.Literal(type))),
    display_type: Type.String({ description: 'A person\'s name for the type, e.g. "Node state change".' }),
    condition: Type.String({
      description: 'The alert_me value the event matched (docs/rules/alerts-and-fleet.md#conditions).',
    }),
    sequence: Type.Integer({
      description: "Per resource, strictly increasing: order a resource's notifications by it.",
    }),
    occurred_at: Type.String({ description: 'ISO 8601, UTC.' }),
    organization: Type.Object({ id: Type.String(), name: Type.String() }),
    node: Type.Object(
      { id: Type.String(), name: Type.String() },
      { description: 'The node the resource is or is on.' },
    ),
    resource: Type.Object({
      kind: Type.Union([Type.Literal('node'), Type.Literal('tunnel'), Type.Literal('service')]),
      id: Type.String(),
      name: Type.String(),
    }),
    previous_state: Type.Union([Type.String(), Type.Null()], {
      description: 'State (or value: address, version) before; null when there is none.',
    }),
    current_state: Type.String({ description: 'State, or the new value (address, version, expiry date).' }),
    alert: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()], {
      description: 'The alert behind the notification; null for a test.',
    }),
    message: Type.String({ description: 'One sentence for a person.' }),
    test: Type.Boolean({ description: "true for the test operation's sample." }),
  },
  {
    description: [
      'POSTed as JSON with the headers Content-Type: application/json, X-Service-Timestamp (ms since epoch),',
      'X-Service-Delivery (unique per delivery, kept by retries), X-Service-Signature:',
      'v1=<lower-hex HMAC-SHA256(secret, timestamp + "." + raw body)>, and the webhook\'s extra headers.',
      'After a secret rotation, until the old secret expires, X-Service-Signature is v1=<hex with the new',
      "secret>,<hex with the old> and webhook-signature holds both secrets' signatures, space-separated:",
      'accept a request when any of them matches the secret you hold.',
      'Worked example: secret "whsec-example-0123456789abcdef", timestamp 1767225600000 and the body in',
      'docs/notifications.md give v1=8381be23959137729f305d0926eff756da8e2e570052a6f738271ce1d1db2080.',
    ].join(' '),
  },
);
