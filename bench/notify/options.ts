// The section's command-line options, for bench/run.ts to spread into its own parseArgs call.

export const NOTIFY_OPTIONS = {
  'notify-changes': { type: 'string', default: '5000' },
  'notify-rate': { type: 'string', default: '20' },
  'notify-seconds': { type: 'string', default: '20' },
  'notify-rounds': { type: 'string', default: '3' },
  'notify-concurrency': { type: 'string', default: '8' },
  'notify-batch': { type: 'string', default: '100' },
} as const;

export interface NotifyOptions {
  /** State changes (one per node) per throughput round: as many notifications. */
  changes: number;
  /** The latency measurement's steady rate of state changes. */
  ratePerSecond: number;
  latencySeconds: number;
  /** Untimed changes at the same rate before the timed ones. */
  latencyWarmupSeconds: number;
  /** Throughput rounds; each row is its median round. */
  rounds: number;
  /** DELIVERY_CONCURRENCY_PER_WEBHOOK for the service, and the undici floor's requests in flight. */
  concurrency: number;
  /** Alerts per POST /api/v2/alerts to Alertmanager. */
  alertmanagerBatch: number;
}

type Values = { [name in keyof typeof NOTIFY_OPTIONS]: string };

export function notifyOptions(values: Values): NotifyOptions {
  const whole = (name: keyof Values, min: number) => {
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be a whole number ≥ ${min}`);
    return value;
  };
  return {
    changes: whole('notify-changes', 1),
    ratePerSecond: whole('notify-rate', 1),
    latencySeconds: whole('notify-seconds', 1),
    latencyWarmupSeconds: 2,
    rounds: whole('notify-rounds', 1),
    concurrency: whole('notify-concurrency', 1),
    alertmanagerBatch: whole('notify-batch', 1),
  };
}
