export type NotifyDatabase = 'sqlite' | 'postgres';

/** A measurement of one `serve` process (API and worker together) on one database. */
export interface ServiceCase {
  name: string;
  measure: 'latency' | 'throughput';
  database: NotifyDatabase;
}

/** The throughput measurement with the API alone in one process and the deliveries in `workers` others. */
export interface WorkersCase {
  name: string;
  measure: 'workers';
  database: 'postgres';
  workers: number;
}

/** One notification measurement of the service; `--only <text>` picks those whose name contains it. */
export type NotifyCase = ServiceCase | WorkersCase;

/** The targets; every figure is printed beside them (and beside its anchors) as a ratio. */
export const TARGETS = {
  p50Ms: 5,
  p99Ms: 20,
  notificationsPerSecond: 2_800,
  /** Of the bare undici loop's rate, measured in the same run. */
  floorRatio: 0.5,
  /** Of Alertmanager's rate, measured in the same run: faster means a ratio above 1. */
  alertmanagerRatio: 1,
  /** Of one worker process's rate, measured in the same run, with the most worker processes: no loss. */
  workersRatio: 0.9,
} as const;

export const DATABASE_LABEL: Record<NotifyDatabase, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

export const NOTIFY_CASES: NotifyCase[] = [
  { name: 'notify latency: SQLite', measure: 'latency', database: 'sqlite' },
  { name: 'notify latency: PostgreSQL', measure: 'latency', database: 'postgres' },
  { name: 'notify throughput: SQLite', measure: 'throughput', database: 'sqlite' },
  { name: 'notify throughput: PostgreSQL', measure: 'throughput', database: 'postgres' },
  ...[1, 2, 4].map((workers): WorkersCase => ({
    name: `notify workers: PostgreSQL, ${workers} worker${workers === 1 ? '' : 's'}`,
    measure: 'workers',
    database: 'postgres',
    workers,
  })),
];

/** Every case without `--only`; else those whose name contains it. The anchors run with any throughput case. */
export function selectNotifyCases(only: string | undefined): NotifyCase[] {
  if (only === undefined) return NOTIFY_CASES;
  const needle = only.toLowerCase();
  return NOTIFY_CASES.filter((c) => c.name.toLowerCase().includes(needle));
}
