import type { QueueName } from './queues.js';

/** One job-queue measurement; `--only <text>` picks the edgewatch ones whose name contains it. */
export interface JobCase {
  name: string;
  measure: 'throughput' | 'latency';
  queue: QueueName;
  database: 'sqlite' | 'postgres';
  /** Worker processes (on SQLite the worker runs in the enqueuing process). */
  workers: number;
  /** The graphile-worker case measured beside this one, in the same run; it runs whenever this one does. */
  anchor?: string;
  goals?: {
    minJobsPerSecond?: number;
    /** Drain rate at least this multiple of the anchor's. */
    minRatio?: number;
    maxP50Ms?: number;
    maxP99Ms?: number;
  };
}

const GRAPHILE_1 = 'jobs throughput: graphile-worker, PostgreSQL, 1 worker process';
const GRAPHILE_2 = 'jobs throughput: graphile-worker, PostgreSQL, 2 worker processes';
const GRAPHILE_LATENCY = 'jobs latency: graphile-worker, PostgreSQL, 1 worker process';

const LATENCY_GOALS = { maxP50Ms: 5, maxP99Ms: 20 };

// In the order they run: each anchor right after the case it anchors, so both see the same machine.
export const JOB_CASES: JobCase[] = [
  {
    name: 'jobs throughput: edgewatch, SQLite, in process',
    measure: 'throughput',
    queue: 'edgewatch',
    database: 'sqlite',
    workers: 1,
    goals: { minJobsPerSecond: 10_000 },
  },
  {
    name: 'jobs throughput: edgewatch, PostgreSQL, 1 worker process',
    measure: 'throughput',
    queue: 'edgewatch',
    database: 'postgres',
    workers: 1,
    anchor: GRAPHILE_1,
    goals: { minRatio: 1 },
  },
  { name: GRAPHILE_1, measure: 'throughput', queue: 'graphile-worker', database: 'postgres', workers: 1 },
  {
    name: 'jobs throughput: edgewatch, PostgreSQL, 2 worker processes',
    measure: 'throughput',
    queue: 'edgewatch',
    database: 'postgres',
    workers: 2,
    anchor: GRAPHILE_2,
    goals: { minRatio: 1 },
  },
  { name: GRAPHILE_2, measure: 'throughput', queue: 'graphile-worker', database: 'postgres', workers: 2 },
  {
    name: 'jobs latency: edgewatch, SQLite, in process',
    measure: 'latency',
    queue: 'edgewatch',
    database: 'sqlite',
    workers: 1,
    goals: LATENCY_GOALS,
  },
  {
    name: 'jobs latency: edgewatch, PostgreSQL, 1 worker process',
    measure: 'latency',
    queue: 'edgewatch',
    database: 'postgres',
    workers: 1,
    anchor: GRAPHILE_LATENCY,
    goals: LATENCY_GOALS,
  },
  { name: GRAPHILE_LATENCY, measure: 'latency', queue: 'graphile-worker', database: 'postgres', workers: 1 },
];

/** The cases `--only` selects: every one without it; else the matching edgewatch ones and their anchors. */
export function selectJobCases(only: string | undefined): JobCase[] {
  if (only === undefined) return JOB_CASES;
  const needle = only.toLowerCase();
  const picked = JOB_CASES.filter((c) => c.queue === 'edgewatch' && c.name.toLowerCase().includes(needle));
  const anchors = new Set(picked.flatMap((c) => (c.anchor === undefined ? [] : [c.anchor])));
  return JOB_CASES.filter((c) => picked.includes(c) || anchors.has(c.name));
}
