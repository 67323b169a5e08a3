/**
 * The alert types, their conditions (`alert_me`) and what each accepts, as the API's validation has them
 * (a test holds this to the service's own table).
 */
export const ALERT_TYPES = {
  NODE_STATE_CHANGE: { label: 'Node state change', conditions: ['ALIVE', 'UNREACHABLE'], duration: true },
  TUNNEL_STATE_CHANGE: {
    label: 'Tunnel state change',
    conditions: ['CONNECTED', 'TERMINATED'],
    duration: true,
  },
  SERVICE_STATE_CHANGE: {
    label: 'Service state change',
    conditions: ['HEALTHY', 'UNHEALTHY', 'TERMINATED'],
    duration: true,
  },
  NODE_IP_CHANGE: { label: 'Node IP change', conditions: ['PRIVATE_IP', 'PUBLIC_IP'], duration: true },
  CERT_EXPIRY: { label: 'Certificate expiry', conditions: ['80', '100'], duration: false },
  HEADLESS_EXPIRY: { label: 'Headless expiry', conditions: ['80', '100'], duration: false },
  NODE_UPGRADE: {
    label: 'Node upgrade',
    conditions: ['ENABLED', 'DISABLED', 'SUCCESSFUL', 'FAILED'],
    duration: false,
  },
} as const;

export type AlertType = keyof typeof ALERT_TYPES;

export const ALERT_TYPE_NAMES = Object.keys(ALERT_TYPES) as AlertType[];

/** The scope beyond node and organization that a type takes: a tunnel, a service (`pod_id`), or none. */
export function extraScope(type: AlertType): 'tunnel_id' | 'pod_id' | undefined {
  if (type === 'TUNNEL_STATE_CHANGE') return 'tunnel_id';
  if (type === 'SERVICE_STATE_CHANGE') return 'pod_id';
  return undefined;
}

/** Whether `settings.suppress_when_node_unreachable` applies (tunnel and service notifications). */
export const suppressible = (type: AlertType) => extraScope(type) !== undefined;

export const conditionLabel = (type: AlertType, condition: string) =>
  type === 'CERT_EXPIRY' || type === 'HEADLESS_EXPIRY' ? `${condition} % used` : condition;

/** The types as filter options: `[type, label]`. */
export const ALERT_TYPE_OPTIONS = ALERT_TYPE_NAMES.map((name) => [name, ALERT_TYPES[name].label] as const);

/** A type's label, or the type itself if the console does not know it. */
export const labelOfType = (type: string): string =>
  (ALERT_TYPES as Record<string, { label: string } | undefined>)[type]?.label ?? type;
