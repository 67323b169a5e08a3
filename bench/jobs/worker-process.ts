// A process of the job section: one queue (edgewatch's or graphile-worker's) that, on the runner's "go", runs
// no-op jobs noting when each starts, enqueues, or both (on SQLite the enqueuer and the worker share one
// queue, as in the service); it reports when told to stop, or by itself once its own plan is done.
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from '../lib/report.js';
import type { QueueName } from './queues.js';
import { enqueueInBatches, openEdgewatch, openGraphileWorker, wallClockMs } from './queues.js';

/** Passed as JSON in BENCH_JOB_PROCESS; `worker` false: the process only enqueues. */
export interface WorkerSpec {
  queue: QueueName;
  worker: boolean;
  concurrency: number;
  database: { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string; schema: string };
  produce?:
    { kind: 'batches'; jobs: number; batch: number } | { kind: 'paced'; ratePerSecond: number; jobs: number };
}

export interface WorkerReport {
  type: 'report';
  runs: number;
  /** Wall-clock ms when the worker was started, and of the first and the last run's start. */
  startedAt: number;
  firstRunAt: number;
  lastRunAt: number;
  /** Start of each job's run by its sequence number (null: it did not run here). */
  starts: (number | null)[];
  /** CPU time (user + system) of this process from its first run until it was told to stop. */
  cpuMs: number;
  /** As the enqueuer: how long the batches took, each paced job's commit time, the table seen empty. */
  enqueueMs?: number;
  commits?: (number | null)[];
  settledAt?: number;
}

const send = (message: object) =>
  new Promise<void>((resolve, reject) =>
    process.send!(message, undefined, {}, (error) => (error === null ? resolve() : reject(error))),
  );

const spec = JSON.parse(process.env.BENCH_JOB_PROCESS ?? '') as WorkerSpec;
const { database } = spec;
const queue =
  database.kind === 'sqlite'
    ? await openEdgewatch(database, undefined, true)
    : spec.queue === 'edgewatch'
      ? await openEdgewatch({ kind: 'postgres', url: database.url }, database.schema)
      : await openGraphileWorker(database.url, database.schema);

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
  if (runs === lastSent) return;
  lastSent = runs;
  // A runner that has gone away ends this process through 'disconnect' below.
  send({ type: 'progress', runs }).catch(() => undefined);
}, 20);

let finishing: Promise<void> | undefined;
function finish(produced: Partial<WorkerReport> = {}): Promise<void> {
  finishing ??= (async () => {
    clearInterval(progress);
    const cpu = cpuAtFirstRun && process.cpuUsage(cpuAtFirstRun);
    await queue.close();
    const cpuMs = cpu === undefined ? 0 : (cpu.user + cpu.system) / 1000;
    await send({ type: 'report', runs, startedAt, firstRunAt, lastRunAt, starts, cpuMs, ...produced });
    process.exit(0);
  })();
  return finishing;
}

/** Every job run (by this process's worker, the one running) and the table empty: when that was seen. */
async function settled(jobs: number) {
  await until(() => runs >= jobs, 'every job to run');
  await until(async () => (await queue.remaining()) === 0, 'the table to empty', 10);
  return wallClockMs();
}

async function produce(plan: NonNullable<WorkerSpec['produce']>): Promise<void> {
  if (plan.kind === 'batches') {
    // Every job is in the table before the worker starts: the drain is measured alone.
    const enqueueMs = await enqueueInBatches(queue, plan.jobs, plan.batch);
    if (!spec.worker) return finish({ enqueueMs });
    await startWorker();
    return finish({ enqueueMs, settledAt: await settled(plan.jobs) });
  }
  if (spec.worker) await startWorker();
  // Open loop: job i is enqueued (one job, one transaction) at t0 + i / rate whether or not the earlier ones
  // have committed; its commit time is taken as soon as the transaction resolves.
  const commits: (number | null)[] = [];
  const pending: Promise<void>[] = [];
  const t0 = performance.now() + 10;
  for (let seq = 0; seq < plan.jobs; seq += 1) {
    const wait = t0 + (seq * 1000) / plan.ratePerSecond - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(queue.enqueueOne(seq).then(() => void (commits[seq] = wallClockMs())));
  }
  await Promise.all(pending);
  return finish(spec.worker ? { commits, settledAt: await settled(plan.jobs) } : { commits });
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
