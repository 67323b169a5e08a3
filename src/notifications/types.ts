/** The seven notification types, with what a person reads and which states each one has. */
export const NOTIFICATION_TYPES = [
  'NODE_STATE_CHANGE',
  'TUNNEL_STATE_CHANGE',
  'SERVICE_STATE_CHANGE',
  'NODE_IP_CHANGE',
  'CERT_EXPIRY',
  'HEADLESS_EXPIRY',
  'NODE_UPGRADE',
] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export type ResourceKind = 'node' | 'tunnel' | 'service';

export interface TypeInfo {
  displayName: string;
  resourceKind: ResourceKind;
  /** States an alert can ask for in `alert_me`; empty for types that are events, not states. */
  states: readonly string[];
  /** Whether `duration` (minutes the condition must hold) applies. */
  takesDuration: boolean;
}

export const TYPE_INFO: Record<NotificationType, TypeInfo> = {
  NODE_STATE_CHANGE: {
    displayName: 'Node state change',
    resourceKind: 'node',
    states: ['ALIVE', 'UNREACHABLE'],
    takesDuration: true,
  },
  TUNNEL_STATE_CHANGE: {
    displayName: 'Tunnel state change',
    resourceKind: 'tunnel',
    states: ['CONNECTED', 'DISCONNECTED'],
    takesDuration: true,
  },
  SERVICE_STATE_CHANGE: {
    displayName: 'Service state change',
    resourceKind: 'service',
    states: ['HEALTHY', 'UNHEALTHY'],
    takesDuration: true,
  },
  NODE_IP_CHANGE: { displayName: 'Node IP change', resourceKind: 'node', states: [], takesDuration: true },
  CERT_EXPIRY: { displayName: 'Certificate expiry', resourceKind: 'node', states: [], takesDuration: false },
  HEADLESS_EXPIRY: { displayName: 'Headless expiry', resourceKind: 'node', states: [], takesDuration: false },
  NODE_UPGRADE: { displayName: 'Node upgrade', resourceKind: 'node', states: [], takesDuration: false },
};
