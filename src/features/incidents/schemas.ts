import { DeliveryStatus } from '../deliveries/log-schemas.js';
import { Type } from 'typebox';
import { ChannelTypeAnswer } from '../alerts/schemas.js';
import { CURRENT_NAMES, Named } from '../notifications/names-schema.js';

const IncidentStatus = Type.Union([Type.Literal('firing'), Type.Literal('resolved')], {
  description:
    'firing: some member is in trouble, or its resolve is not sent yet; resolved: every member recovered.',
});

export const Incident = Type.Object({
  id: Type.String({ description: 'The incident; its messages carry it as incident.id.' }),
  status: IncidentStatus,
  alert: Type.Object(
    { id: Type.String(), name: Type.String({ description: "The alert's current name." }) },
    { description: 'The alert whose notifications it groups.' },
  ),
  owner: Type.Object(Named.properties, {
    description: 'The user whose alert it is (in scope=org lists, often not the caller).',
  }),
  organization: Type.Object(Named.properties, {
    description: `The organization whose resources are in it: its group key with group_by organization, the node's with group_by node. ${CURRENT_NAMES}`,
  }),
  node: Type.Union([Type.Object(Named.properties), Type.Null()], {
    description: `The node whose resources are in it, with group_by node; null with group_by organization. ${CURRENT_NAMES}`,
  }),
  type: Type.String({ description: "The alert's notification type, e.g. NODE_STATE_CHANGE." }),
  group_by: Type.Union([Type.Literal('organization'), Type.Literal('node')], {
    description:
      'What its members share: their organization, or their node (a node with its tunnels and services).',
  }),
  opened_at: Type.String({ description: 'When its first member fired, ISO 8601 UTC.' }),
  resolved_at: Type.Union([Type.String(), Type.Null()], {
    description: 'When its resolve was decided, ISO 8601 UTC; null while firing.',
  }),
  last_message_at: Type.String({ description: 'When its last message was made, ISO 8601 UTC.' }),
  sequence: Type.Integer({
    minimum: 1,
    description: 'Messages made so far: the sequence of the last one (1 is the opening message).',
  }),
  counts: Type.Object(
    {
      firing: Type.Integer({ minimum: 0, description: 'Members firing now.' }),
      flaps: Type.Integer({
        minimum: 0,
        description: 'Members that recovered and fired again since the last message.',
      }),
      behind_unreachable: Type.Integer({
        minimum: 0,
        description: 'Tunnel and service changes folded into their UNREACHABLE node.',
      }),
      members: Type.Integer({
        minimum: 0,
        description:
          'Members it holds now (GET /api/v2/incident/{id}/members): the firing ones, and the recovered ones ' +
          'kept until their recovery is told and a flap could no longer follow it.',
      }),
    },
    { description: 'The incident in numbers.' },
  ),
});

const MessageStatus = Type.Union(
  [
    Type.Literal('pending'),
    Type.Literal('delivered'),
    Type.Literal('failed'),
    Type.Literal('held'),
    Type.Literal('expired'),
    Type.Literal('suppressed'),
    Type.Literal('cancelled'),
    Type.Literal('grouped'),
  ],
  {
    description:
      'As a notification’s: pending (on its way, or waiting for a retry), delivered, failed (the e-mail gave ' +
      'up), held (its webhook is disabled; sent once it is verified again), expired (held too long), ' +
      'cancelled (its webhook or channel was deleted before it went out).',
  },
);

export const MessageDelivery = Type.Object({
  id: Type.String({ description: 'Sent as X-Service-Delivery; the same on every retry.' }),
  webhook_id: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Integer({ minimum: 0, description: 'Requests made for it so far.' }),
  delivered_at: Type.Union([Type.String(), Type.Null()], {
    description: 'When the receiver took it, ISO 8601 UTC; null until then.',
  }),
});

export const IncidentMessage = Type.Object({
  notification_id: Type.String({ description: 'The message is a notification of the incident; its id.' }),
  sequence: Type.Integer({ minimum: 1, description: "Its place in the incident's messages, from 1." }),
  reason: Type.Union(
    [Type.Literal('opened'), Type.Literal('updated'), Type.Literal('repeat'), Type.Literal('resolved')],
    {
      description:
        'Why it was sent: opened (the first member), updated (members changed), repeat (nothing changed for ' +
        'repeat_interval) or resolved (every member recovered).',
    },
  ),
  status: MessageStatus,
  created_at: Type.String({ description: 'When the message was made, ISO 8601 UTC.' }),
  channel_type: ChannelTypeAnswer,
  deliveries: Type.Array(MessageDelivery, {
    description:
      'Its webhook deliveries (webhooks, Slack, Teams, PagerDuty), oldest first; empty for e-mail.',
  }),
});

export const IncidentWithMessages = Type.Object({
  ...Incident.properties,
  messages: Type.Array(IncidentMessage, { description: 'Every message of the incident, oldest first.' }),
});

const MemberNamed = Type.Object(Named.properties, {
  description: "As the member's latest notification names it.",
});

export const IncidentMember = Type.Object({
  key: Type.String({
    description: 'The member: its resource’s id, or the event’s for a type without a good state.',
  }),
  resource: Type.Object(
    {
      kind: Type.Union([Type.Literal('node'), Type.Literal('tunnel'), Type.Literal('service')]),
      id: Type.String(),
      name: Type.String(),
    },
    {
      description:
        'What changed (a node itself, or its tunnel or service), as its latest notification names it.',
    },
  ),
  node: MemberNamed,
  organization: MemberNamed,
  condition: Type.String({ description: 'Its condition: the state it entered, or what changed.' }),
  previous_state: Type.Union([Type.String(), Type.Null()]),
  current_state: Type.String(),
  firing: Type.Boolean({ description: 'false: it recovered, and stays listed until its recovery is told.' }),
  since: Type.String({ description: 'When its current state began, ISO 8601 UTC.' }),
  change: Type.Union([Type.Literal('new'), Type.Literal('recovered'), Type.Null()], {
    description: 'What the next message will tell of it: new (it fired), recovered, or null (nothing new).',
  }),
  flaps: Type.Integer({
    minimum: 0,
    description: 'How often it recovered and fired again since the last message.',
  }),
});

export const incidentFilters = {
  scope: Type.Optional(
    Type.Union([Type.Literal('mine'), Type.Literal('org')], {
      default: 'mine',
      description:
        "mine: the caller's own incidents (those of their alerts). org: every user's incidents in the caller's " +
        'organization and those below it, for Admin and Operator (another role → 403); org_id then narrows ' +
        'within it, and one outside it → 404. Reading one (GET /api/v1/incident/{id}) follows the same rule.',
    }),
  ),
  org_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: "The incident's organization and those below it: yours or one below it (another → 404).",
    }),
  ),
  alert_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  status: Type.Optional(IncidentStatus),
};
