import { NOTIFICATION_CONDITIONS } from '../../receiver/index.js';

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
  /**
   * The values of `alert_me` (docs/rules/alerts-and-fleet.md#conditions), in the order answers list them: the
   * state a resource entered, which address changed, the percentage of a validity used up, or an upgrade's
   * status.
   */
  conditions: readonly string[];
  /** Whether `duration` (minutes the condition must hold) applies. */
  takesDuration: boolean;
}

export const TYPE_INFO: Record<NotificationType, TypeInfo> = {
  NODE_STATE_CHANGE: {
    displayName: 'Node state change',
    resourceKind: 'node',
    conditions: NOTIFICATION_CONDITIONS.NODE_STATE_CHANGE,
    takesDuration: true,
  },
  TUNNEL_STATE_CHANGE: {
    displayName: 'Tunnel state change',
    resourceKind: 'tunnel',
    conditions: NOTIFICATION_CONDITIONS.TUNNEL_STATE_CHANGE,
    takesDuration: true,
  },
  SERVICE_STATE_CHANGE: {
    displayName: 'Service state change',
    resourceKind: 'service',
    conditions: NOTIFICATION_CONDITIONS.SERVICE_STATE_CHANGE,
    takesDuration: true,
  },
  NODE_IP_CHANGE: {
    displayName: 'Node IP change',
    resourceKind: 'node',
    conditions: NOTIFICATION_CONDITIONS.NODE_IP_CHANGE,
    takesDuration: true,
  },
  CERT_EXPIRY: {
    displayName: 'Certificate expiry',
    resourceKind: 'node',
    conditions: NOTIFICATION_CONDITIONS.CERT_EXPIRY,
    takesDuration: false,
  },
  HEADLESS_EXPIRY: {
    displayName: 'Headless expiry',
    resourceKind: 'node',
    conditions: NOTIFICATION_CONDITIONS.HEADLESS_EXPIRY,
    takesDuration: false,
  },
  NODE_UPGRADE: {
    displayName: 'Node upgrade',
    resourceKind: 'node',
    conditions: NOTIFICATION_CONDITIONS.NODE_UPGRADE,
    takesDuration: false,
  },
};

/** Every condition of a type, as an `alert_me` value: what an alert without `alert_me` watches. */
export const allConditions = (type: NotificationType): string => TYPE_INFO[type].conditions.join(',');
