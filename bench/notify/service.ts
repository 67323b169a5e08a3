// The service as the section runs it: a fresh database seeded with the section's nodes, the service on it
// (`serve`, or `serve --role api` beside worker processes that share its environment), one webhook to the
// local receiver, verified, and one alert: TUNNEL_STATE_CHANGE on the root organization, channel webhook.
import { num, type Common } from '../lib/options.js';
import type { Receiver } from '../lib/receiver.js';
import * as r from '../lib/report.js';
import * as service from '../lib/service.js';
import { ALERTMANAGER, FLOOR } from './anchors.js';
import { seedDatabase } from './seed.js';

/**
 * One notification measurement: of one `serve` process (latency, throughput), of the throughput's anchors
 * (floor, Alertmanager), or of the API alone in one process beside `workers` worker processes.
 */
export interface NotifyCase extends r.Case {
  measure: 'latency' | 'throughput' | 'floor' | 'alertmanager' | 'workers';
  database?: 'sqlite' | 'postgres';
  workers?: number;
}

/** The goals per database; ratios are to Alertmanager's and one worker process's rates, same run. */
type Targets = { p50Ms: number; p99Ms: number; perSecond: number; alertmanagerRatio: number };
const TARGETS: Record<'sqlite' | 'postgres', Targets & { cpuPerNotificationUs?: number }> = {
  sqlite: { p50Ms: 2.5, p99Ms: 10, perSecond: 2_000, alertmanagerRatio: 0.8, cpuPerNotificationUs: 450 },
  postgres: { p50Ms: 4, p99Ms: 10, perSecond: 1_200, alertmanagerRatio: 0.3 },
};

/** The goals of a measurement, by the database in its name. */
export const targetsOf = (name: string) => (name.includes('PostgreSQL') ? TARGETS.postgres : TARGETS.sqlite);
export const WORKERS_RATIO = 0.9;

const DATABASES = { sqlite: 'SQLite', postgres: 'PostgreSQL' } as const;

export const NOTIFY_CASES: NotifyCase[] = [
  ...(['latency', 'throughput'] as const).flatMap((measure) =>
    (['sqlite', 'postgres'] as const).map((database) => {
      const anchors = measure === 'throughput' ? [FLOOR, ALERTMANAGER] : undefined;
      return { name: `notify ${measure}: ${DATABASES[database]}`, measure, database, anchors };
    }),
  ),
  { name: FLOOR, measure: 'floor', anchor: true },
  { name: ALERTMANAGER, measure: 'alertmanager', anchor: true },
  ...[1, 2, 4].map((workers): NotifyCase => {
    const name = `notify workers: PostgreSQL, ${workers} worker${workers === 1 ? '' : 's'}`;
    return { name, measure: 'workers', database: 'postgres', workers };
  }),
];

export const notifySettings = (common: Common) => ({
  ...common,
  /** State changes (one per node) per throughput round: as many notifications. */
  changes: num('notify-changes'),
  /** The latency: changes a second, 2 s untimed then `latencySeconds` timed. */
  ratePerSecond: num('notify-rate'),
  latencySeconds: num('notify-seconds'),
  rounds: num('notify-rounds'),
  /** DELIVERY_CONCURRENCY_PER_WEBHOOK, and the floor's requests in flight. */
  concurrency: num('notify-concurrency'),
  /** Alerts per POST /api/v2/alerts to Alertmanager. */
  alertmanagerBatch: num('notify-batch'),
});

export interface NotifyContext {
  settings: ReturnType<typeof notifySettings>;
  receiver: Receiver;
  /** The webhook's secret: the receiver signs challenges and checks signatures with it. */
  secret: string;
  logDir: string;
  /** Nodes seeded into every database, and those that change once a throughput round. */
  nodes: number;
  changing: number[];
}

type Deploy = { role?: 'api'; build?: service.Build };

export async function startNotifyService(ctx: NotifyContext, url: string, logFile: string, how: Deploy = {}) {
  const { role, build = service.THIS_BUILD } = how;
  r.progress(`seeding ${r.whole(ctx.nodes)} nodes into ${url.split(/[:/]/).at(-1)} (${build.label})`);
  const seeded = await seedDatabase(url, ctx.nodes, undefined, build);
  const { nodeOptions, concurrency, certificates } = ctx.settings;
  const env = {
    ...seeded.env,
    // Far beyond the section's length: a sweep that found the seeded nodes silent would add events.
    NODE_HEARTBEAT_TIMEOUT_S: '3600',
    DELIVERY_CONCURRENCY_PER_WEBHOOK: String(concurrency),
    ...service.localWebhooksEnv(certificates),
  };
  const started = await service.startService({ role, build, nodeOptions, logFile, env });
  try {
    const { receiver, secret } = ctx;
    const hook = await service.verifiedWebhook(started.api!, 'Bench receiver', receiver.url('/hook'), secret);
    await service.tunnelAlert(started.api!, 'Every tunnel', hook);
  } catch (error) {
    await started.stop();
    throw error;
  }
  return { ...started, env };
}
