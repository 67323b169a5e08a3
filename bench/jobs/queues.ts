// The two queues under test behind one interface: edgewatch's (src/jobs, wired as the worker role wires it)
// and graphile-worker, the anchor, with the options its documentation gives for performance.
import pg from 'pg';
import { Logger, makeWorkerUtils, run, runMigrations, type Runner } from 'graphile-worker';
import { loadConfig } from '../../src/config.js';
import { connectDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { systemClock } from '../../src/lib/clock.js';
import { registerJobMetrics } from '../../src/jobs/metrics.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { Worker } from '../../src/jobs/worker.js';
import { createLogger } from '../../src/observability/logger.js';
import { createRegistry } from '../../src/observability/metrics.js';

/** The one kind (task identifier) every benchmark job has; its handler does nothing but note the run. */
const KIND = 'bench_noop';

export type QueueName = 'edgewatch' | 'graphile-worker';
export type QueueDatabase =
  { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string; schema: string };

export interface QueueUnderTest {
  /** Many jobs in one statement (a transaction of their own on edgewatch, one `add_jobs` call on graphile-worker). */
  enqueueBatch(seqs: readonly number[]): Promise<unknown>;
  /** One job in a transaction of its own; resolves once it is committed. */
  enqueueOne(seq: number): Promise<unknown>;
  /** Rows left in the queue's table: unfinished jobs, and finished ones not yet removed. */
  remaining(): Promise<number>;
  /** `onRun` is the handler's first act, with the job's sequence number. */
  startWorker(concurrency: number, onRun: (seq: number) => void): Promise<void>;
  close(): Promise<void>;
}

/** Wall-clock ms with sub-ms resolution: every process here reads the same clock, so times can be subtracted. */
export const wallClockMs = () => performance.timeOrigin + performance.now();

/** Jobs 0 … count − 1, `batch` to a statement, one statement after the other; returns the ms it took. */
export async function enqueueInBatches(queue: QueueUnderTest, count: number, batch: number): Promise<number> {
  const started = performance.now();
  for (let first = 0; first < count; first += batch)
    await queue.enqueueBatch(Array.from({ length: Math.min(batch, count - first) }, (_, n) => first + n));
  return performance.now() - started;
}

/** graphile-worker's options for throughput, as https://worker.graphile.org/docs/performance gives them. */
export const graphileWorkerOptions = (concurrency: number) => ({
  ...{ concurrentJobs: concurrency, maxPoolSize: concurrency + 1, localQueue: { size: 500 } },
  ...{ completeJobBatchDelay: 0, failJobBatchDelay: 0 },
});

/** `migrate`: the runner does, once per schema, before any worker process connects (on SQLite, the process). */
export async function openQueue(name: QueueName, database: QueueDatabase, migrate = false) {
  if (name === 'edgewatch') return openEdgewatch(database, migrate);
  if (database.kind === 'sqlite') throw new Error('graphile-worker runs on PostgreSQL only');
  return openGraphileWorker(database.url, database.schema, migrate);
}

async function openEdgewatch(database: QueueDatabase, migrate: boolean): Promise<QueueUnderTest> {
  const schema = database.kind === 'postgres' ? database.schema : undefined;
  const db = connectDatabase(database, { schema });
  if (migrate) await migrateToLatest(db);
  const queue = new JobQueue(db, systemClock);
  let worker: Worker | undefined;
  const job = (seq: number) => ({ kind: KIND, payload: { seq } });
  return {
    enqueueBatch: (seqs) => db.transaction().execute((tx) => queue.enqueueMany(tx, seqs.map(job))),
    enqueueOne: (seq) => db.transaction().execute((tx) => queue.enqueue(tx, KIND, { seq })),
    async remaining() {
      const count = db.selectFrom('jobs').select((eb) => eb.fn.countAll<number | string>().as('n'));
      return Number((await count.executeTakeFirstOrThrow()).n);
    },
    async startWorker(concurrency, onRun) {
      // What the worker role runs: the service's defaults for the poll and the lease, its logger at info (a
      // handler's own lines are the only ones it writes per job: none on success), and its job metrics.
      const { jobPollIntervalMs: pollMs, jobLeaseMs: leaseMs } = loadConfig({});
      const handlers = [{ kind: KIND, concurrency, handle: async ({ seq }: { seq: number }) => onRun(seq) }];
      const metrics = registerJobMetrics(createRegistry(), db, systemClock);
      const logger = createLogger('info');
      worker = new Worker({ db, queue, clock: systemClock, logger, handlers, pollMs, leaseMs, metrics });
      await worker.start();
    },
    async close() {
      await worker?.stop();
      await db.destroy();
    },
  };
}

/** graphile-worker's migrations log each step at info; the runner's terminal is for figures. */
const logger = new Logger(() => () => undefined);
async function openGraphileWorker(connectionString: string, schema: string, migrate: boolean) {
  if (migrate) await runMigrations({ connectionString, schema, logger });
  let utils: ReturnType<typeof makeWorkerUtils> | undefined;
  const workerUtils = () => (utils ??= makeWorkerUtils({ connectionString, schema, logger }));
  const counter = new pg.Pool({ connectionString, max: 1 });
  let runner: Runner | undefined;
  return {
    enqueueBatch: async (seqs) =>
      (await workerUtils()).addJobs(seqs.map((seq) => ({ identifier: KIND, payload: { seq } }))),
    enqueueOne: async (seq) => (await workerUtils()).addJob(KIND, { seq }),
    async remaining() {
      const sql = `select count(*) as n from ${pg.escapeIdentifier(schema)}._private_jobs`;
      return Number((await counter.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
    },
    async startWorker(concurrency, onRun) {
      runner = await run({
        noHandleSignals: true,
        taskList: { [KIND]: async (payload) => onRun((payload as { seq: number }).seq) },
        preset: { worker: { connectionString, schema, ...graphileWorkerOptions(concurrency) } },
      });
    },
    async close() {
      await runner?.stop();
      await (await utils)?.release();
      await counter.end();
    },
  } satisfies QueueUnderTest;
}
