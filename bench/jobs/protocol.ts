// What the runner and a worker process (bench/jobs/worker-process.ts) tell each other over the IPC channel.
import type { QueueName } from './queues.js';

export type ProcessDatabase =
  { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string; schema: string };

/**
 * What a process enqueues when it is told to go. On SQLite the worker's own process enqueues: the queue wakes
 * its workers in process, so the enqueuer and the worker share one queue object, as they do in the service. On
 * PostgreSQL the latency's enqueuer is a process of its own, with nothing else in its event loop.
 */
export type ProducePlan =
  | { kind: 'batches'; jobs: number; batch: number }
  | { kind: 'paced'; ratePerSecond: number; warmupJobs: number; jobs: number };

/** Passed as JSON in BENCH_JOB_PROCESS. */
export interface WorkerProcessSpec {
  queue: QueueName;
  /** Whether the process runs a worker (false: it only enqueues). */
  worker: boolean;
  concurrency: number;
  database: ProcessDatabase;
  produce?: ProducePlan;
}

export type ParentMessage = { type: 'go' } | { type: 'stop' };

export interface WorkerReport {
  runs: number;
  /** Wall-clock ms (see produce.ts) when the worker was started, and of the first and the last run's start. */
  startedAt: number | null;
  firstRunAt: number | null;
  lastRunAt: number | null;
  /** Start of each job's run, by its sequence number (null: it did not run here). */
  starts: (number | null)[];
  /** CPU time (user + system) this process used from its first run until it was told to stop. */
  cpuMs: number;
  /** What this process measured as the enqueuer, if it enqueued. */
  produced?: {
    /** Batches: how long enqueueing took. */
    enqueueMs?: number;
    /** Paced: each job's commit time, by sequence number. */
    commits?: (number | null)[];
    /** When the queue's table was seen empty after the last run (the process ran a worker too). */
    settledAt?: number;
  };
}

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'started' }
  | { type: 'progress'; runs: number }
  | { type: 'report'; report: WorkerReport }
  | { type: 'failed'; message: string };
