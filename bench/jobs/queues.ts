// The two queues under test behind one small interface, used by the runner (to enqueue on PostgreSQL, and to
// count what is left) and by the worker processes (to run the jobs). edgewatch's queue is the code in src/jobs,
// wired as the worker role wires it; graphile-worker is the anchor, with the options its documentation gives
// for performance.
import pg from 'pg';
import {
  Logger as GraphileLogger,
  makeWorkerUtils,
  run,
  runMigrations,
  type Runner,
  type WorkerUtils,
} from 'graphile-worker';
import { loadConfig, type DatabaseTarget } from '../../src/config.js';
import { connectDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Db } from '../../src/db/types.js';
import { systemClock } from '../../src/lib/clock.js';
import { registerJobMetrics } from '../../src/jobs/metrics.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { Worker, type JobHandler } from '../../src/jobs/worker.js';
import { createLogger } from '../../src/observability/logger.js';
import { createRegistry } from '../../src/observability/metrics.js';

/** The one kind (task identifier) every benchmark job has; its handler does nothing but note the run. */
export const JOB_KIND = 'bench_noop';

export type QueueName = 'edgewatch' | 'graphile-worker';

export interface JobPayload {
  seq: number;
}

/** Called by the handler, first thing, with the job's sequence number. */
export type OnRun = (seq: number) => void;

export interface QueueUnderTest {
  /** Many jobs in one statement (in a transaction of their own on edgewatch, one `add_jobs` call on graphile-worker). */
  enqueueBatch(seqs: readonly number[]): Promise<void>;
  /** One job in a transaction of its own; resolves once it is committed. */
  enqueueOne(seq: number): Promise<void>;
  /** Rows left in the queue's table: unfinished jobs, and finished ones not yet removed. */
  remaining(): Promise<number>;
  startWorker(concurrency: number, onRun: OnRun): Promise<void>;
  /** Stops the worker (if started) and closes every connection. */
  close(): Promise<void>;
}

/** Jobs a worker process fetches and holds at a time, on both sides. */
const LOCAL_QUEUE = 500;

/**
 * graphile-worker's options for throughput, as its performance page gives them
 * (https://worker.graphile.org/docs/performance): a local queue of 500 jobs fetched at a time, and
 * batched completions; the pool one larger than the concurrency, as there.
 */
export function graphileWorkerOptions(concurrency: number) {
  return {
    concurrentJobs: concurrency,
    maxPoolSize: concurrency + 1,
    localQueue: { size: LOCAL_QUEUE },
    completeJobBatchDelay: 0,
    failJobBatchDelay: 0,
  };
}

// ----- edgewatch -----

export interface EdgewatchOptions {
  /** Apply the migrations (the runner does, once per schema, before any worker process connects). */
  migrate?: boolean;
}

export async function openEdgewatch(
  target: DatabaseTarget,
  schema: string | undefined,
  options: EdgewatchOptions = {},
): Promise<QueueUnderTest> {
  const db: Db = connectDatabase(target, schema === undefined ? {} : { schema });
  if (options.migrate === true) await migrateToLatest(db);
  const queue = new JobQueue(db, systemClock);
  let worker: Worker | undefined;
  return {
    async enqueueBatch(seqs) {
      await db.transaction().execute((tx) =>
        queue.enqueueMany(
          tx,
          seqs.map((seq) => ({ kind: JOB_KIND, payload: { seq } satisfies JobPayload })),
        ),
      );
    },
    async enqueueOne(seq) {
      await db.transaction().execute((tx) => queue.enqueue(tx, JOB_KIND, { seq } satisfies JobPayload));
    },
    async remaining() {
      const row = await db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async startWorker(concurrency, onRun) {
      // What the worker role runs, with the service's defaults for the poll and the lease, its logger at
      // info (the job handler's own lines are the only ones it writes per job: none on success), and its
      // metrics (a counter and a histogram per run).
      const defaults = loadConfig({});
      const handler: JobHandler<JobPayload> = {
        kind: JOB_KIND,
        concurrency,
        // The same local queue as graphile-worker's below: up to 500 jobs claimed per statement.
        prefetch: LOCAL_QUEUE - concurrency,
        handle: (payload) => {
          onRun(payload.seq);
          return Promise.resolve();
        },
      };
      worker = new Worker({
        db,
        queue,
        clock: systemClock,
        logger: createLogger('info'),
        handlers: [handler],
        pollMs: defaults.jobPollIntervalMs,
        leaseMs: defaults.jobLeaseMs,
        metrics: registerJobMetrics(createRegistry(), db, systemClock),
      });
      await worker.start();
    },
    async close() {
      await worker?.stop();
      await db.destroy();
    },
  };
}

// ----- graphile-worker -----

/** Installs graphile-worker's tables and functions in `schema` (the runner does, before any worker starts). */
export async function migrateGraphileWorker(connectionString: string, schema: string): Promise<void> {
  await runMigrations({ connectionString, schema, logger: quietLogger() });
}

export async function openGraphileWorker(connectionString: string, schema: string): Promise<QueueUnderTest> {
  let utils: WorkerUtils | undefined;
  const workerUtils = async () =>
    (utils ??= await makeWorkerUtils({ connectionString, schema, logger: quietLogger() }));
  const counter = new pg.Pool({ connectionString, max: 1 });
  let runner: Runner | undefined;
  return {
    async enqueueBatch(seqs) {
      const helpers = await workerUtils();
      await helpers.addJobs(seqs.map((seq) => ({ identifier: JOB_KIND, payload: { seq } })));
    },
    async enqueueOne(seq) {
      const helpers = await workerUtils();
      await helpers.addJob(JOB_KIND, { seq } satisfies JobPayload);
    },
    async remaining() {
      const { rows } = await counter.query<{ n: string }>(
        `select count(*) as n from ${pg.escapeIdentifier(schema)}._private_jobs`,
      );
      return Number(rows[0]?.n ?? 0);
    },
    async startWorker(concurrency, onRun) {
      runner = await run({
        noHandleSignals: true,
        taskList: {
          [JOB_KIND]: (payload) => {
            onRun((payload as JobPayload).seq);
            return Promise.resolve();
          },
        },
        preset: { worker: { connectionString, schema, ...graphileWorkerOptions(concurrency) } },
      });
    },
    async close() {
      await runner?.stop();
      await utils?.release();
      await counter.end();
    },
  };
}

/** graphile-worker's migrations log each step at info; the runner's terminal is for figures. */
function quietLogger(): GraphileLogger {
  return new GraphileLogger(() => () => undefined);
}
