/** The shapes of the API's answers that the console reads (see /docs for the whole description). */

export interface Ref {
  id: string;
  name: string;
}

export interface Me {
  id: string;
  name: string;
  email: string;
  org_id: string;
  organization: Ref;
  roles: Ref[];
}

export type NodeState = 'NEW' | 'ALIVE' | 'UNREACHABLE';

export interface FleetNode {
  id: string;
  name: string;
  hardware_serial_number: string | null;
  node_state: NodeState;
  state_since: string;
  last_seen_at: string | null;
  organization: Ref;
  metadata: { labels: Record<string, string> };
  max_headless_time: number;
  headless_expires_at: string | null;
  status: {
    node: {
      addresses: { type: string; address: string }[];
      info: { version: { software_version: string | null } };
    };
  };
  certificate: { not_before: string; not_after: string } | null;
  upgrade: { status: string } | null;
  tunnels: Record<string, number>;
  services: Record<string, number>;
  /** While the node is UNREACHABLE the counts are only what it last reported. */
  resource_states: { stale: boolean; as_of: string | null };
  created_at: string;
  token?: string;
}

export interface Tunnel {
  id: string;
  name: string;
  state: string;
  state_since: string;
  peer_node_id: string | null;
  stale: boolean;
  as_of: string | null;
}

export interface Service {
  id: string;
  name: string;
  status: string;
  state_since: string;
  stale: boolean;
  as_of: string | null;
}

export interface FleetEvent {
  id: string;
  type: string;
  condition: string;
  organization: Ref;
  node: Ref;
  resource: { kind: string; id: string; name: string };
  previous_state: string | null;
  current_state: string;
  sequence: number;
  occurred_at: string;
  detected_at: string;
}

export type NotificationStatus =
  'pending' | 'delivered' | 'failed' | 'held' | 'expired' | 'suppressed' | 'cancelled';

export interface Attempt {
  at: string;
  duration_ms: number | null;
  status_code: number | null;
  failure?: string | null;
  error: string | null;
  response?: string | null;
}

/** The tunnel or service a notification is about; null when it is about the node itself. */
export type NamedResource = { kind: 'tunnel' | 'service'; id: string; name: string } | null;

export interface Notification {
  id: string;
  status: NotificationStatus;
  reason: string | null;
  alert: Ref;
  /** The user whose alert it is: in the "Everyone's" list, often not the one signed in. */
  owner: Ref;
  type: string;
  condition: string;
  organization: Ref;
  node: Ref;
  resource: NamedResource;
  channel_type: 'EMAIL' | 'WEBHOOK' | 'SLACK' | 'MSTEAMS' | 'PAGERDUTY';
  webhook_id: string | null;
  occurred_at: string;
  created_at: string;
  payload: { display_type: string; message: string; node: Ref; resource: { kind: string; name: string } };
  deliveries?: { id: string; webhook_id: string; status: string; attempts: Attempt[] }[];
}

export interface Alert {
  id: string;
  name: string;
  type: string;
  display_type: string;
  settings: {
    org_id: string;
    alert_me: string;
    duration?: string;
    include_child: string;
    suppress_when_node_unreachable?: string;
    node_id?: string;
    tunnel_id?: string;
    pod_id?: string;
  };
  channel_type: 'EMAIL' | 'WEBHOOK' | 'SLACK' | 'MSTEAMS' | 'PAGERDUTY';
  channel: Ref | null;
  created_at: string;
}

export interface Webhook {
  id: string;
  name: string;
  url: string;
  is_enabled: boolean;
  disabled_reason: 'unverified' | 'edited' | 'failing' | 'gone' | null;
  headers: Record<string, string>;
  created_at: string;
  subscription_count: number;
  secret?: string;
}

export type ChannelType = 'slack' | 'msteams' | 'pagerduty';

/** A Slack, Teams or PagerDuty contact point; its URL or routing key is only ever shown masked. */
export interface Channel {
  id: string;
  name: string;
  type: ChannelType;
  target: string;
  is_enabled: boolean;
  disabled_reason: 'failing' | 'gone' | null;
  created_at: string;
  subscription_count: number;
}

export interface Delivery {
  id: string;
  notification_id: string;
  alert: Ref;
  type: string;
  organization: Ref;
  node: Ref;
  resource: NamedResource;
  status: string;
  attempts: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  attempt_log?: Attempt[];
}

export interface Silence {
  id: string;
  name: string;
  org_id: string;
  include_child: boolean;
  node_id: string | null;
  /** null: every type. */
  types: string[] | null;
  /** A recurring window: its first occurrence's start. */
  starts_at: string;
  /** A recurring window: its last occurrence's end; null when it has no until. */
  ends_at: string | null;
  comment: string | null;
  state: 'upcoming' | 'active' | 'ended' | 'cancelled';
  /** null: a one-off window. */
  recurrence: Recurrence | null;
  until: string | null;
  /** The occurrence open now, else the next one; null when none is left. */
  next_occurrence: { starts_at: string; ends_at: string } | null;
}

export type Weekday = 'MO' | 'TU' | 'WE' | 'TH' | 'FR' | 'SA' | 'SU';

export interface Recurrence {
  frequency: 'daily' | 'weekly';
  /** Weekly only. */
  days?: Weekday[];
  /** Local time of day, HH:MM. */
  start: string;
  duration_minutes: number;
  timezone: string;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  key?: string;
}

export interface Role {
  id: string;
  name: string;
}

/** A user of the directory (`GET /api/v2/user`): an Admin sees those of their organization and below. */
export interface User {
  id: string;
  name: string;
  email: string;
  org_id: string;
  organization: Ref;
  roles: Ref[];
  email_verified: boolean;
  created_at: string;
}

/** What a user owns: what removing them with `force=true` removes too. */
export interface Belongings {
  alerts: number;
  webhooks: number;
  channels: number;
}

/** One user (`GET /api/v1/user/{id}`), with what they own. */
export interface UserDetail extends User {
  owns: Belongings;
}

export interface UserRemoval {
  id: string;
  status: 'SUCCESS';
  message: string;
  removed: Belongings;
}

export type IncidentStatus = 'firing' | 'resolved';

/** One alert's open trouble for one organization or node (`GET /api/v2/incident`): its notifications grouped. */
export interface Incident {
  id: string;
  status: IncidentStatus;
  alert: Ref;
  /** The user whose alert it is: in the "Everyone's" list, often not the one signed in. */
  owner: Ref;
  organization: Ref;
  /** With group_by node only. */
  node: Ref | null;
  type: string;
  group_by: 'organization' | 'node';
  opened_at: string;
  resolved_at: string | null;
  last_message_at: string;
  /** Messages made so far. */
  sequence: number;
  counts: { firing: number; flaps: number; behind_unreachable: number; members: number };
}

/** A message the incident sent: a notification of the incident, with its webhook or channel deliveries. */
export interface IncidentMessage {
  notification_id: string;
  sequence: number;
  reason: 'opened' | 'updated' | 'repeat' | 'resolved';
  status: NotificationStatus | 'grouped';
  created_at: string;
  channel_type: Alert['channel_type'];
  deliveries: {
    id: string;
    webhook_id: string;
    status: string;
    attempts: number;
    delivered_at: string | null;
  }[];
}

/** One incident (`GET /api/v1/incident/{id}`), with its messages, oldest first. */
export interface IncidentDetail extends Incident {
  messages: IncidentMessage[];
}

/** A member of an incident (`GET /api/v2/incident/{id}/members`): changed ones first. */
export interface IncidentMember {
  key: string;
  resource: { kind: 'node' | 'tunnel' | 'service'; id: string; name: string };
  node: Ref;
  organization: Ref;
  condition: string;
  previous_state: string | null;
  current_state: string;
  /** false: it recovered, and stays listed until its recovery is told. */
  firing: boolean;
  since: string;
  /** What the next message tells of it. */
  change: 'new' | 'recovered' | null;
  flaps: number;
}
