import type { NotificationBody } from '../../receiver/index.js';
import { TYPE_INFO, type NotificationType, type ResourceKind } from './types.js';

/**
 * The body of every notification, the same shape for all seven types (docs/notifications.md), as the
 * receiver kit publishes it. `previous_state` / `current_state` carry a state name for state types and a
 * value (an address, a version, an expiry date) for the others.
 */
export type NotificationPayload = NotificationBody;

/** What happened, as the fleet's events record it (docs/rules/alerts-and-fleet.md#events). */
export interface EventFacts {
  id: string;
  type: NotificationType;
  condition: string;
  sequence: number;
  occurredAt: number;
  organization: { id: string; name: string };
  node: { id: string; name: string };
  resource: { kind: ResourceKind; id: string; name: string };
  previous: string | null;
  current: string;
}

const day = (iso: string) => iso.slice(0, 10);
const was = (previous: string | null) => (previous === null ? '' : ` (was ${previous})`);

// One sentence per type: a table, not a switch, so adding a type is one line.
const MESSAGES: Record<NotificationType, (facts: EventFacts) => string> = {
  NODE_STATE_CHANGE: (f) => `Node ${f.node.name} is ${f.current}${was(f.previous)}.`,
  TUNNEL_STATE_CHANGE: (f) =>
    `Tunnel ${f.resource.name} of node ${f.node.name} is ${f.current}${was(f.previous)}.`,
  SERVICE_STATE_CHANGE: (f) =>
    `Service ${f.resource.name} of node ${f.node.name} is ${f.current}${was(f.previous)}.`,
  NODE_IP_CHANGE: (f) =>
    `Node ${f.node.name} changed its ${f.condition === 'PUBLIC_IP' ? 'public' : 'private'} IP address from ` +
    `${f.previous ?? 'none'} to ${f.current}.`,
  CERT_EXPIRY: (f) => {
    if (f.condition === 'RENEWED')
      return `The certificate of node ${f.node.name} was renewed; it now expires on ${day(f.current)}.`;
    return f.condition === '100'
      ? `The certificate of node ${f.node.name} expired on ${day(f.current)}.`
      : `The certificate of node ${f.node.name} is 80 % through its validity; it expires on ${day(f.current)}.`;
  },
  HEADLESS_EXPIRY: (f) =>
    f.condition === '100'
      ? `Node ${f.node.name} has been unreachable for all of its headless time (until ${f.current}).`
      : `Node ${f.node.name} has been unreachable for 80 % of its headless time; it runs out at ${f.current}.`,
  NODE_UPGRADE: (f) => {
    if (f.condition === 'SUCCESSFUL')
      return `Node ${f.node.name} was upgraded from ${f.previous} to ${f.current}.`;
    if (f.condition === 'FAILED') return `The upgrade of node ${f.node.name} failed (it runs ${f.previous}).`;
    return `Automatic upgrades of node ${f.node.name} are ${f.condition}.`;
  },
};

export function eventMessage(facts: EventFacts): string {
  return MESSAGES[facts.type](facts);
}

/** The body for an event and the alert that asked for it (null for a test). */
export function notificationPayload(
  facts: EventFacts,
  alert: { id: string; name: string } | null,
  test = false,
): NotificationPayload {
  return {
    id: facts.id,
    type: facts.type,
    display_type: TYPE_INFO[facts.type].displayName,
    condition: facts.condition,
    sequence: facts.sequence,
    occurred_at: new Date(facts.occurredAt).toISOString(),
    organization: facts.organization,
    node: facts.node,
    resource: facts.resource,
    previous_state: facts.previous,
    current_state: facts.current,
    alert,
    message: `${test ? '[test] ' : ''}${eventMessage(facts)}`,
    test,
  };
}

const NODE = { kind: 'node' as const, id: 'sample-node-1', name: 'edge-node-01' };

type Sample = Pick<EventFacts, 'resource' | 'condition' | 'previous' | 'current'>;

const SAMPLES: Record<NotificationType, Sample> = {
  NODE_STATE_CHANGE: { resource: NODE, condition: 'UNREACHABLE', previous: 'ALIVE', current: 'UNREACHABLE' },
  TUNNEL_STATE_CHANGE: {
    resource: { kind: 'tunnel', id: 'sample-tunnel-1', name: 'uplink' },
    condition: 'TERMINATED',
    previous: 'CONNECTED',
    current: 'TERMINATED',
  },
  SERVICE_STATE_CHANGE: {
    resource: { kind: 'service', id: 'sample-service-1', name: 'metrics-agent' },
    condition: 'UNHEALTHY',
    previous: 'HEALTHY',
    current: 'UNHEALTHY',
  },
  NODE_IP_CHANGE: {
    resource: NODE,
    condition: 'PUBLIC_IP',
    previous: '203.0.113.10',
    current: '203.0.113.24',
  },
  CERT_EXPIRY: { resource: NODE, condition: '80', previous: null, current: '2026-12-31T00:00:00.000Z' },
  HEADLESS_EXPIRY: { resource: NODE, condition: '80', previous: null, current: '2026-12-31T00:00:00.000Z' },
  NODE_UPGRADE: { resource: NODE, condition: 'SUCCESSFUL', previous: '4.2.0', current: '4.3.1' },
};

/** The test operation's sample of a type: a made-up node in the caller's organization. */
export function samplePayload(
  type: NotificationType,
  context: { eventId: string; occurredAt: number; organization: { id: string; name: string } },
): NotificationPayload {
  const sample = SAMPLES[type];
  const facts: EventFacts = {
    ...sample,
    id: context.eventId,
    type,
    sequence: 1,
    occurredAt: context.occurredAt,
    organization: context.organization,
    node: { id: NODE.id, name: NODE.name },
  };
  return notificationPayload(facts, null, true);
}
