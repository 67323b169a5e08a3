import { Type } from 'typebox';
import { NOTIFICATION_TYPES, TYPE_INFO } from '../notifications/types.js';
import { GROUP_TIMES, type GroupTime } from './grouping.js';
import { MAX_DURATION_MINUTES } from './rules.js';

const AlertName = Type.String({ minLength: 1, maxLength: 128 });

export const AlertType = Type.Union(
  NOTIFICATION_TYPES.map((type) => Type.Literal(type)),
  { description: 'What to watch.' },
);

const OrgId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "Organization whose resources are watched: the caller's or one below it (else 404).",
});

/** A scope id; null means none, so an edit can remove a scope. */
const scope = (description: string) =>
  Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
      description: `${description} null or omitted: no such scope.`,
    }),
  );

const GROUP_BY_VALUES = [Type.Literal('none'), Type.Literal('organization'), Type.Literal('node')] as const;

const GROUP_TIME_MEANING: Record<GroupTime, string> = {
  group_wait:
    "Seconds after an incident's first message during which new members are gathered into one update; " +
    'also how long a resolve waits for a member to fire again.',
  group_interval: 'Seconds at least between two updates of an incident.',
  repeat_interval:
    'Seconds after which an unchanged firing incident is sent again; 0: never. Ignored for PagerDuty, ' +
    'which escalates by itself.',
};

/** A grouping time: whole seconds, or their decimal string (what answers give); its range is a rule. */
function groupTime(time: GroupTime) {
  const { min, max, fallback } = GROUP_TIMES[time];
  return Type.Optional(
    Type.Union([Type.Integer(), Type.String({ maxLength: 16 }), Type.Null()], {
      description:
        `${GROUP_TIME_MEANING[time]} ${min} to ${max}, a whole number or its decimal string (answers give ` +
        `a string); default ${fallback}; null puts it back to the default; anything else → 400 naming the field.`,
    }),
  );
}

const settingsFields = {
  org_id: OrgId,
  alert_me: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description:
        'Comma-separated conditions that notify. ' +
        NOTIFICATION_TYPES.map((type) => `${type}: ${TYPE_INFO[type].conditions.join(', ')}`).join('; ') +
        ". Optional: omitted means all of the type's conditions. Answers give the normalized list (the " +
        "type's order, no repeats); an unknown condition → 400 naming the valid ones.",
    }),
  ),
  duration: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_DURATION_MINUTES,
      description:
        'Minutes the condition must hold (0 to 10080; default 0), for NODE_STATE_CHANGE, TUNNEL_STATE_CHANGE, ' +
        'SERVICE_STATE_CHANGE and NODE_IP_CHANGE; returned as a string. The other types accept it (the ' +
        'published client sends it with every type) and ignore it: not stored, not returned.',
    }),
  ),
  include_child: Type.Optional(
    Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')], {
      description: 'Also watch every organization below org_id. Defaults to true. Returned as a string.',
    }),
  ),
  suppress_when_node_unreachable: Type.Optional(
    Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')], {
      description:
        'TUNNEL_STATE_CHANGE and SERVICE_STATE_CHANGE: a notification whose node is UNREACHABLE (or, for a ' +
        "tunnel, whose peer node is) is stored as suppressed (reason node_unreachable) and not sent: the node's " +
        'own alert tells the cause once. Defaults to true; returned as a string for those two types. Other ' +
        'types accept it and have nothing to suppress.',
    }),
  ),
  node_id: scope(
    'Only this node, its tunnels and its services (any type). Must be a node you can see (else 404) inside ' +
      "org_id's scope (else 400).",
  ),
  tunnel_id: scope(
    'Only this tunnel; TUNNEL_STATE_CHANGE alerts only (else 400). Must be a tunnel you can see (else 404) ' +
      "inside org_id's scope and, with node_id, on that node (else 400).",
  ),
  pod_id: scope(
    "Only this service (a service's id); SERVICE_STATE_CHANGE alerts only (else 400). Must be a service you " +
      "can see (else 404) inside org_id's scope and, with node_id, on that node (else 400).",
  ),
  network_id: scope('Not supported: networks are not modelled, so any value → 400.'),
  group_by: Type.Optional(
    Type.Union([...GROUP_BY_VALUES, Type.Null()], {
      description:
        "How the alert's notifications are grouped into incidents: none (each sent on its own), organization " +
        "(the resource's own organization) or node (a node with its tunnels and services). Default: none for " +
        'webhooks, organization for e-mail, Slack, Teams and PagerDuty; null puts it back to the default of ' +
        "the alert's channel (docs/rules/alerts-and-fleet.md#grouping).",
    }),
  ),
  group_wait: groupTime('group_wait'),
  group_interval: groupTime('group_interval'),
  repeat_interval: groupTime('repeat_interval'),
};

export const Settings = Type.Object(settingsFields, { additionalProperties: false });

const EditSettings = Type.Object(
  { ...settingsFields, org_id: Type.Optional(OrgId) },
  {
    additionalProperties: false,
    description:
      'Merged over the stored settings field by field: each of org_id, alert_me, duration, include_child, ' +
      'suppress_when_node_unreachable, the scopes and the grouping is kept unless given (a scope given as ' +
      'null is removed; a grouping setting given as null goes back to its default). The merged settings must pass ' +
      "every rule of creation for the alert's type.",
  },
);

const channelTypeUnion = (description: string) =>
  Type.Union(
    [
      Type.Literal('email'),
      Type.Literal('webhook'),
      Type.Literal('slack'),
      Type.Literal('msteams'),
      Type.Literal('pagerduty'),
    ],
    { description },
  );
const ChannelType = channelTypeUnion(
  'email, webhook, or a channel type (slack, msteams, pagerduty), in any case (WEBHOOK works); null or omitted ' +
    'means email.',
);
const ChannelId = Type.String({
  minLength: 1,
  maxLength: 64,
  description:
    'Id of one of your enabled webhooks, or channels of channel_type; not with email. null means absent.',
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
    type: Type.Optional(
      Type.Union(
        NOTIFICATION_TYPES.map((type) => Type.Literal(type)),
        { description: "The alert's own type, accepted and ignored; any other type → 400." },
      ),
    ),
    settings: Type.Optional(EditSettings),
    channel_type: Type.Optional(
      channelTypeUnion(
        'email, webhook, slack, msteams or pagerduty, in any case. When omitted (or null): with channel_id, the ' +
          "current endpoint's kind (webhook for an e-mail alert), else the current channel. A kind without " +
          "channel_id keeps the alert's current endpoint of that kind.",
      ),
    ),
    channel_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Id of one of your webhooks; never with channel_type email. null means absent.',
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Changes only the fields given; every other field is kept. name replaces the name. settings is merged ' +
      'over the stored settings field by field (org_id, alert_me, duration, include_child each kept unless ' +
      "given) and the result must pass every rule of creation for the alert's type (400; an org_id outside " +
      "your organizations → 404). type cannot be changed: the alert's own type is ignored, another → 400. " +
      'Channel: channel_type omitted means webhook when channel_id is given, else the current channel; ' +
      "channel_type webhook without channel_id keeps the alert's webhook (400 for an e-mail alert); " +
      'channel_type email with channel_id → 400. Moving the alert onto a webhook (from e-mail, or to ' +
      'another webhook) needs one of your webhooks (else 404), enabled (else 422), and a free place under ' +
      'MAX_WEBHOOK_ALERTS_PER_USER (else 422). An alert that stays on its webhook is not checked again, so it ' +
      'can still be edited after its webhook was disabled. Something must change: an empty body, settings {} ' +
      "alone or the alert's own type alone → 400. Nothing is written when a rule fails.",
  },
);

/** How an alert, and each of its notifications, is sent, as answers show it: upper case. */
export const ChannelTypeAnswer = Type.Union([
  Type.Literal('EMAIL'),
  Type.Literal('WEBHOOK'),
  Type.Literal('SLACK'),
  Type.Literal('MSTEAMS'),
  Type.Literal('PAGERDUTY'),
]);

export const Alert = Type.Object({
  metadata: Type.Object({
    labels: Type.Object({ '_service.alert.name': Type.String({ description: 'Display name of the type.' }) }),
  }),
  name: Type.String(),
  type: Type.String(),
  settings: Type.Object({
    org_id: Type.String(),
    alert_me: Type.String({ description: "The conditions that notify, in the type's order." }),
    duration: Type.Optional(Type.String({ description: 'Only for the four types that use it.' })),
    include_child: Type.String({ description: '"true" or "false".' }),
    suppress_when_node_unreachable: Type.Optional(
      Type.String({ description: '"true" or "false"; TUNNEL_STATE_CHANGE and SERVICE_STATE_CHANGE only.' }),
    ),
    node_id: Type.Optional(Type.String({ description: 'Only when the alert is scoped to a node.' })),
    tunnel_id: Type.Optional(Type.String({ description: 'Only when the alert is scoped to a tunnel.' })),
    pod_id: Type.Optional(Type.String({ description: 'Only when the alert is scoped to a service.' })),
    group_by: Type.Union([...GROUP_BY_VALUES], {
      description: "In force: the alert's own choice, or its channel's default.",
    }),
    group_wait: Type.String({ description: 'Seconds, in force (the default filled in).' }),
    group_interval: Type.String({ description: 'Seconds, in force.' }),
    repeat_interval: Type.String({ description: 'Seconds, in force.' }),
  }),
  id: Type.String(),
  display_type: Type.String(),
  channel_type: ChannelTypeAnswer,
  channel: Type.Object({
    id: Type.String({ description: "The webhook or channel id, or the id of the user's e-mail channel." }),
    name: Type.String({ description: 'The webhook or channel name, or "Email".' }),
  }),
  created_at: Type.String({ description: 'ISO 8601 with offset, e.g. 2026-01-02T03:04:05.678+00:00.' }),
  created_by: Type.Object({ id: Type.String(), name: Type.String() }),
});
