// A process of the job section: on the runner's "go", one queue's worker (noting when each job starts), its
// enqueuer, or both (SQLite, as in the service); it reports when told to stop, or once its own plan is done.
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from '../lib/report.js';
import { enqueueInBatches, openQueue, wallClockMs, type QueueDatabase, type QueueName } from './queues.js';

/** Passed as JSON in BENCH_JOB_PROCESS; `worker` false: the process only enqueues. */
export interface WorkerSpec {
  queue: QueueName;
  worker: boolean;
  concurrency: number;
  database: QueueDatabase;
  produce?:
    { kind: 'batches'; jobs: number; batch: number } | { kind: 'paced'; ratePerSecond: number; jobs: number };
}

/** Times in wall-clock ms; `starts[seq]`: when job seq started here (null: not here); `cpuMs`: from the first run. */
export interface WorkerReport {
  runs: number;
  startedAt: number;
  firstRunAt: number;
  lastRunAt: number;
  starts: (number | null)[];
  cpuMs: number;
  /** As the enqueuer: how long the batches took, each paced job's commit, when it saw the table empty. */
  enqueueMs?: number;
  commits?: (number | null)[];
  settledAt?: number;
}

const send = (message: object) =>
  new Promise<void>((resolve, reject) =>
    process.send!(message, undefined, {}, (error) => (error === null ? resolve() : reject(error))),
  );

const spec = JSON.parse(process.env.BENCH_JOB_PROCESS ?? '') as WorkerSpec;
// The runner migrates a PostgreSQL schema before any process connects; a SQLite file is this process's own.
const queue = await openQueue(spec.queue, spec.database, spec.database.kind === 'sqlite');

const starts: (number | null)[] = [];
let [runs, startedAt, firstRunAt, lastRunAt] = [0, 0, 0, 0];
let cpuAtFirstRun: NodeJS.CpuUsage | undefined;

async function startWorker(): Promise<void> {
  startedAt = wallClockMs();
  await queue.startWorker(spec.concurrency, (seq) => {
    const at = wallClockMs();
    if (runs === 0) [firstRunAt, cpuAtFirstRun] = [at, process.cpuUsage()];
    starts[seq] = lastRunAt = at;
    runs += 1;
  });
  await send({ type: 'started' });
}

let lastSent = -1;
const progress = setInterval(() => {
  // A runner that has gone away ends this process through 'disconnect' below.
  if (runs !== lastSent) send({ type: 'progress', runs }).catch(() => undefined);
  lastSent = runs;
}, 20);

async function finish(produced: Partial<WorkerReport> = {}): Promise<void> {
  clearInterval(progress);
  const cpu = cpuAtFirstRun && process.cpuUsage(cpuAtFirstRun);
  await queue.close();
  const cpuMs = cpu === undefined ? 0 : (cpu.user + cpu.system) / 1000;
  await send({ type: 'report', runs, startedAt, firstRunAt, lastRunAt, starts, cpuMs, ...produced });
  process.exit(0);
}

/** Open loop: job i is enqueued at t0 + i / rate whether or not the earlier ones have committed. */
async function enqueuePaced(jobs: number, ratePerSecond: number) {
  const commits: (number | null)[] = [];
  const pending: Promise<void>[] = [];
  const t0 = performance.now() + 10;
  for (let seq = 0; seq < jobs; seq += 1) {
    const wait = t0 + (seq * 1000) / ratePerSecond - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(queue.enqueueOne(seq).then(() => void (commits[seq] = wallClockMs())));
  }
  await Promise.all(pending);
  return commits;
}

async function produce(plan: NonNullable<WorkerSpec['produce']>): Promise<void> {
  // Batches are all in the table before the worker starts: the drain is measured alone.
  const enqueueMs =
    plan.kind === 'batches' ? await enqueueInBatches(queue, plan.jobs, plan.batch) : undefined;
  if (spec.worker) await startWorker();
  const commits = plan.kind === 'paced' ? await enqueuePaced(plan.jobs, plan.ratePerSecond) : undefined;
  if (!spec.worker) return finish({ commits });
  // Every job run (by this process's worker, the one running) and the table empty: when that was seen.
  await until(() => runs >= plan.jobs, 'every job to run');
  await until(async () => (await queue.remaining()) === 0, 'the table to empty', 10);
  return finish({ enqueueMs, commits, settledAt: wallClockMs() });
}

process.on('message', (message: { type: 'go' | 'stop' }) => {
  const work = message.type === 'stop' ? finish() : spec.produce ? produce(spec.produce) : startWorker();
  work.catch(async (error: unknown) => {
    const why = error instanceof Error ? (error.stack ?? error.message) : String(error);
    await send({ type: 'failed', message: why });
    process.exit(1);
  });
});
// The runner going away (ended, or killed) ends this process too.
process.on('disconnect', () => process.exit(0));
await send({ type: 'ready' });
