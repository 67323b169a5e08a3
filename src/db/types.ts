import type { Generated, Kysely, Transaction } from 'kysely';

/** Timestamps are epoch milliseconds; booleans are 0/1 integers, so one schema serves SQLite and PostgreSQL. */
export interface OrganizationsTable {
  id: string;
  name: string;
  parent_id: string | null;
  created_at: number;
}

export interface RolesTable {
  id: string;
  name: string;
}

export interface UsersTable {
  id: string;
  org_id: string;
  name: string;
  email: string;
  email_normalized: string;
  password_hash: string | null;
  email_verified_at: number | null;
  password_change_required: number;
  created_at: number;
  /** Bumped by every change to the user's webhooks and alerts; validates cached lists. */
  subscriptions_version: Generated<number>;
}

export interface UserRolesTable {
  user_id: string;
  role_id: string;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface EmailVerificationsTable {
  token_hash: string;
  user_id: string;
  expires_at: number;
  used_at: number | null;
}

export interface EmailOutboxTable {
  id: string;
  recipient: string;
  subject: string;
  body_text: string;
  status: 'pending' | 'sent' | 'logged' | 'failed';
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

export interface LoginAttemptsTable {
  id: string;
  address: string;
  email_normalized: string;
  succeeded: number;
  at: number;
}

export type WebhookDisabledReason = 'unverified' | 'edited' | 'failing' | 'gone';

/** The contact points beside webhooks: each an endpoint of the delivery engine, in the webhooks table. */
export const CHANNEL_TYPES = ['slack', 'msteams', 'pagerduty'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export type EndpointKind = 'webhook' | ChannelType;
/** How an alert is sent: e-mail to its owner, or one of the owner's endpoints. */
export type AlertChannelType = 'email' | EndpointKind;

export interface WebhooksTable {
  id: string;
  /** A webhook, or a channel whose sealed secret is its URL (Slack, Teams) or routing key (PagerDuty). */
  kind: EndpointKind;
  user_id: string;
  name: string;
  url: string;
  /** JSON object of extra header name → value. */
  headers: string;
  /** JSON object of metadata label → value. */
  labels: string;
  /** The webhook secret, AES-256-GCM sealed (see lib/secret-box). */
  secret_sealed: string;
  /** After a rotation, the secret it replaced, sealed the same way; it signs too until the time below. */
  previous_secret_sealed: string | null;
  /** When the previous secret stops signing (the clock decides; the hourly retention task clears it). */
  previous_secret_expires_at: number | null;
  is_enabled: number;
  disabled_reason: WebhookDisabledReason | null;
  consecutive_failures: number;
  /** While failing: nothing is sent before this time (the n-th delay of DELIVERY_RETRY_SCHEDULE). */
  retry_at: number | null;
  /** When the last counted failure was recorded: requests started before it do not count again. */
  last_failure_at: number | null;
  created_at: number;
  updated_at: number;
}

export type NotificationStatus =
  'pending' | 'delivered' | 'failed' | 'held' | 'expired' | 'suppressed' | 'cancelled' | 'grouped';

export interface NotificationsTable {
  id: string;
  user_id: string;
  alert_id: string;
  alert_name: string;
  event_id: string;
  type: string;
  condition: string;
  org_id: string;
  node_id: string;
  channel_type: AlertChannelType;
  webhook_id: string | null;
  /** The e-mail in email_outbox, for an e-mail alert. */
  email_id: string | null;
  status: NotificationStatus;
  /** Why it was suppressed (or expired). */
  reason: string | null;
  /** The maintenance window that held it back (suppressed, then perhaps sent at the window's end). */
  silence_id: string | null;
  /** The incident it joined, or (with incident_sequence) the incident whose message it is. */
  incident_id: string | null;
  /** Set on an incident's message only: its sequence in the incident. */
  incident_sequence: number | null;
  /** The body sent (JSON text), the same on every retry. */
  payload: string;
  occurred_at: number;
  created_at: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'held' | 'expired';

export interface DeliveriesTable {
  /** Sent as X-Service-Delivery, the same on every retry. */
  id: string;
  notification_id: string;
  webhook_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: number | null;
  /** When a pending delivery is due (its webhook's gate permitting). */
  next_attempt_at: number | null;
  /** While a request for it is in flight: no other claim takes it, and it fills one of its webhook's slots. */
  lease_until: number | null;
  /** 1 when its owner asked to send it now: the webhook's next request, even before the gate opens. */
  retry_requested: Generated<number>;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
  /** Its last success, kept on the row until a replay logs it (with last_attempt_at, last_status_code). */
  success_duration_ms: number | null;
  success_response: string | null;
  /** The trace its requests are spans of (W3C traceparent); null without tracing. */
  traceparent: string | null;
}

export interface DeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  at: number;
  duration_ms: number;
  status_code: number | null;
  /** The failure kind (net/ errors, or bad_status) when the request failed. */
  failure: string | null;
  error: string | null;
  /** The first KiB of the answer. */
  response: string | null;
}

export interface EmailChannelsTable {
  id: string;
  user_id: string;
  created_at: number;
}

/** One alert's open trouble for one group key (docs/decisions/0008-incidents.md). */
export interface IncidentsTable {
  id: string;
  alert_id: string;
  user_id: string;
  /** The organization's id or the node's, as the alert's group_by says. */
  group_key: string;
  org_id: string;
  /** Set when the alert groups by node. */
  node_id: string | null;
  type: string;
  status: 'firing' | 'resolved';
  opened_at: number;
  resolved_at: number | null;
  /** The last message's sequence; 1 is the opening message. */
  sequence: number;
  last_message_at: number;
  last_change_at: number;
  /** When its flush is due; null once resolved. */
  due_at: number | null;
  /** Flaps since the last message. */
  flaps: number;
  /** Members firing now. */
  firing: number;
  /** Tunnel and service changes folded into their UNREACHABLE node. */
  behind_unreachable: number;
}

export interface IncidentMembersTable {
  incident_id: string;
  /** The resource's id; the event's for a type without a good state. */
  member_key: string;
  notification_id: string;
  condition: string;
  firing: number;
  since: number;
  change: 'new' | 'recovered' | null;
  recovered_at: number | null;
  flaps: number;
  announced: number;
}

/** A maintenance window: notifications it covers are stored, not sent. */
export interface SilencesTable {
  id: string;
  name: string;
  org_id: string;
  include_child: number;
  node_id: string | null;
  /** Comma-separated notification types; null for all. */
  types: string | null;
  /** A recurring window's first occurrence's start. */
  starts_at: number;
  /** A recurring window's last occurrence's end (features/silences/occurrences.ts NEVER without until). */
  ends_at: number;
  comment: string | null;
  created_by: string;
  created_at: number;
  /** A recurring window's schedule (JSON text, features/silences/recurrence.ts); null for a one-off window. */
  recurrence: string | null;
  /** A recurring window's bound: no occurrence starts after it; null for none. */
  until: number | null;
}

export interface AlertsTable {
  id: string;
  user_id: string;
  /** settings.org_id: the organization whose resources are watched. */
  org_id: string;
  name: string;
  type: string;
  /** Comma-separated states, normalized; null for types without states. */
  alert_me: string | null;
  duration_minutes: number | null;
  include_child: number;
  channel_type: AlertChannelType;
  webhook_id: string | null;
  email_channel_id: string | null;
  /** settings.node_id: only this node, its tunnels and its services. */
  scope_node_id: string | null;
  /** settings.tunnel_id (TUNNEL_STATE_CHANGE only). */
  scope_tunnel_id: string | null;
  /** settings.pod_id: a service's id (SERVICE_STATE_CHANGE only). */
  scope_service_id: string | null;
  /** 1: a tunnel or service notification is suppressed while its node (or a tunnel's peer) is UNREACHABLE. */
  suppress_when_node_unreachable: number;
  /** How notifications are grouped into incidents; null: the channel's default (alerts/grouping.ts). */
  group_by: GroupBy | null;
  group_wait_s: number | null;
  group_interval_s: number | null;
  repeat_interval_s: number | null;
  created_at: number;
}

export type GroupBy = 'none' | 'organization' | 'node';

export interface JobsTable {
  id: string;
  kind: string;
  /** JSON. */
  payload: string;
  key: string | null;
  state: 'queued' | 'dead';
  /** When the job is due; while it runs, the end of its lease. */
  run_at: number;
  attempts: number;
  max_attempts: number;
  /** The worker holding the lease; null when the job waits. */
  locked_by: string | null;
  last_error: string | null;
  created_at: number;
}

export type NodeState = 'NEW' | 'ALIVE' | 'UNREACHABLE';

export interface NodesTable {
  id: string;
  org_id: string;
  name: string;
  /** The name's natural-order key (features/fleet/nodes/name-sort.ts): written with every name. */
  name_sort: string;
  hardware_serial_number: string | null;
  /** SHA-256 of the node's credential (X-NODE-TOKEN). */
  token_hash: string;
  /** JSON object of labels. */
  labels: string;
  /** Minutes a node may stay unreachable before its headless time expires. */
  max_headless_time: number;
  node_state: NodeState;
  state_since: number;
  last_seen_at: number | null;
  /** JSON array of {type, address}. */
  addresses: string;
  software_version: string | null;
  /** Its tunnels not CONNECTED and services not HEALTHY, as last reported: the list's orders by them. */
  tunnels_down: number;
  services_down: number;
  upgrade_status: string | null;
  cert_not_before: number | null;
  cert_not_after: number | null;
  /** Of the node's own events; strictly increasing. */
  sequence: number;
  /** JSON object: a digest per section of the reports applied so far; null when nothing may be assumed. */
  report_digest: string | null;
  /** JSON object: the published client's profile_id and stat_mode, as given; null when it sent neither. */
  client_settings: string | null;
  created_at: number;
}

export interface NodeLabelsTable {
  node_id: string;
  key: string;
  value: string;
}

interface FleetResourceColumns {
  id: string;
  node_id: string;
  /** Chosen by the agent; unique per node. */
  key: string;
  name: string;
  state_since: number;
  sequence: number;
  created_at: number;
}

export interface TunnelsTable extends FleetResourceColumns {
  state: string;
  peer_node_id: string | null;
}

export interface ServicesTable extends FleetResourceColumns {
  status: string;
}

export interface FleetEventsTable {
  id: string;
  type: string;
  condition: string;
  org_id: string;
  node_id: string;
  resource_kind: string;
  resource_id: string;
  resource_name: string;
  previous_state: string | null;
  current_state: string;
  sequence: number;
  occurred_at: number;
  detected_at: number;
}

/** A minute in which the fleet's counts were taken. */
export interface FleetHistoryMinutesTable {
  minute: number;
}

/** One organization's own nodes, and their tunnels and services, counted in one minute. */
export interface FleetHistoryTable {
  org_id: string;
  minute: number;
  nodes_alive: number;
  nodes_unreachable: number;
  nodes_new: number;
  /** Known to be away from their good state (tunnels not CONNECTED, services not HEALTHY). */
  tunnels_unhealthy: number;
  /** Of UNREACHABLE nodes: their state now is unknown. */
  tunnels_unknown: number;
  services_unhealthy: number;
  services_unknown: number;
}

/** One row: moved by triggers whenever alerts, windows or a webhook's enabled state change (migration 0026). */
export interface MatchingVersionTable {
  id: number;
  version: number;
}

export interface Database {
  organizations: OrganizationsTable;
  roles: RolesTable;
  users: UsersTable;
  user_roles: UserRolesTable;
  api_keys: ApiKeysTable;
  email_verifications: EmailVerificationsTable;
  email_outbox: EmailOutboxTable;
  login_attempts: LoginAttemptsTable;
  webhooks: WebhooksTable;
  email_channels: EmailChannelsTable;
  alerts: AlertsTable;
  silences: SilencesTable;
  incidents: IncidentsTable;
  incident_members: IncidentMembersTable;
  jobs: JobsTable;
  nodes: NodesTable;
  node_labels: NodeLabelsTable;
  tunnels: TunnelsTable;
  services: ServicesTable;
  fleet_events: FleetEventsTable;
  fleet_history_minutes: FleetHistoryMinutesTable;
  fleet_history: FleetHistoryTable;
  notifications: NotificationsTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  matching_version: MatchingVersionTable;
}

export type Db = Kysely<Database>;
/** What every repository function takes: the database itself or an open transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;
