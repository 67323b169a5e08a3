import type { NotificationBody } from '../receiver/index.js';
import type { NotificationType, ResourceKind } from './types.js';

/**
 * The body of every notification, the same shape for all seven types (docs/notifications.md), as the
 * receiver kit publishes it. `previous_state` / `current_state` carry a state name for state types and a
 * value (an address, a version, an expiry date) for the others.
 */
export type NotificationPayload = NotificationBody;

interface SampleFacts {
  resource: { kind: ResourceKind; id: string; name: string };
  previous: string | null;
  current: string;
  message: string;
}

const NODE = { kind: 'node' as const, id: 'sample-node-1', name: 'edge-node-01' };

// One builder per type: a table, not a switch, so adding a type is one line.
const SAMPLES: Record<NotificationType, SampleFacts> = {
  NODE_STATE_CHANGE: {
    resource: NODE,
    previous: 'ALIVE',
    current: 'UNREACHABLE',
    message: 'Node edge-node-01 is UNREACHABLE (was ALIVE).',
  },
  TUNNEL_STATE_CHANGE: {
    resource: { kind: 'tunnel', id: 'sample-tunnel-1', name: 'edge-node-01/uplink' },
    previous: 'CONNECTED',
    current: 'TERMINATED',
    message: 'Tunnel edge-node-01/uplink is TERMINATED (was CONNECTED).',
  },
  SERVICE_STATE_CHANGE: {
    resource: { kind: 'service', id: 'sample-service-1', name: 'edge-node-01/metrics-agent' },
    previous: 'HEALTHY',
    current: 'UNHEALTHY',
    message: 'Service edge-node-01/metrics-agent is UNHEALTHY (was HEALTHY).',
  },
  NODE_IP_CHANGE: {
    resource: NODE,
    previous: '203.0.113.10',
    current: '203.0.113.24',
    message: 'Node edge-node-01 changed its IP address from 203.0.113.10 to 203.0.113.24.',
  },
  CERT_EXPIRY: {
    resource: NODE,
    previous: null,
    current: '2026-12-31T00:00:00.000Z',
    message: 'The certificate of node edge-node-01 expires on 2026-12-31.',
  },
  HEADLESS_EXPIRY: {
    resource: NODE,
    previous: null,
    current: '2026-12-31T00:00:00.000Z',
    message: 'The headless registration of node edge-node-01 expires on 2026-12-31.',
  },
  NODE_UPGRADE: {
    resource: NODE,
    previous: '4.2.0',
    current: '4.3.1',
    message: 'Node edge-node-01 was upgraded from 4.2.0 to 4.3.1.',
  },
};

export function samplePayload(
  type: NotificationType,
  context: { eventId: string; occurredAt: string; organization: { id: string; name: string } },
): NotificationPayload {
  const facts = SAMPLES[type];
  return {
    id: context.eventId,
    type,
    occurred_at: context.occurredAt,
    organization: context.organization,
    resource: facts.resource,
    previous_state: facts.previous,
    current_state: facts.current,
    alert: null,
    message: `[test] ${facts.message}`,
    test: true,
  };
}
