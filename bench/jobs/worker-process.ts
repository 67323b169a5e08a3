// A process of the job benchmarks: opens one queue (edgewatch's or graphile-worker's), waits for the runner's
// "go", then runs no-op jobs, noting when each one starts, and reports when told to stop. A process may enqueue
// instead, or as well (see protocol.ts); then it reports by itself once it has enqueued everything and, if it
// runs a worker too, once every job has run and the table is empty.
import { setTimeout as sleep } from 'node:timers/promises';
import { enqueueInBatches, enqueuePaced, wallClockMs } from './produce.js';
import type {
  ChildMessage,
  ParentMessage,
  ProducePlan,
  WorkerProcessSpec,
  WorkerReport,
} from './protocol.js';
import { openEdgewatch, openGraphileWorker, type QueueUnderTest } from './queues.js';

const PROGRESS_EVERY_MS = 20;
const DEADLINE_MS = 120_000;

function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    if (process.send === undefined) reject(new Error('no IPC channel: run this from bench/run.ts'));
    else process.send(message, undefined, {}, (error) => (error === null ? resolve() : reject(error)));
  });
}

const raw = process.env.BENCH_JOB_PROCESS;
if (raw === undefined) throw new Error('BENCH_JOB_PROCESS is not set');
const spec = JSON.parse(raw) as WorkerProcessSpec;

const starts: (number | null)[] = [];
let runs = 0;
let firstRunAt: number | null = null;
let lastRunAt: number | null = null;
let cpuAtFirstRun: NodeJS.CpuUsage | undefined;
let startedAt: number | null = null;

async function startWorker(): Promise<void> {
  startedAt = wallClockMs();
  await queue.startWorker(spec.concurrency, onRun);
  await send({ type: 'started' });
}

function onRun(seq: number): void {
  const at = wallClockMs();
  if (firstRunAt === null) {
    firstRunAt = at;
    cpuAtFirstRun = process.cpuUsage();
  }
  starts[seq] = at;
  lastRunAt = at;
  runs += 1;
}

async function until(condition: () => boolean | Promise<boolean>, what: string, everyMs = 5): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${runs} runs so far)`);
    await sleep(everyMs);
  }
}

async function openQueue(): Promise<QueueUnderTest> {
  const database = spec.database;
  if (database.kind === 'sqlite') {
    if (spec.queue !== 'edgewatch') throw new Error(`${spec.queue} runs on PostgreSQL only`);
    return openEdgewatch({ kind: 'sqlite', file: database.file }, undefined, { migrate: true });
  }
  // The runner has migrated the schema, once, before any worker process started.
  return spec.queue === 'edgewatch'
    ? openEdgewatch({ kind: 'postgres', url: database.url }, database.schema)
    : openGraphileWorker(database.url, database.schema);
}

const queue = await openQueue();

let lastSent = -1;
const progress = setInterval(() => {
  if (runs === lastSent) return;
  lastSent = runs;
  // A runner that has gone away ends this process through 'disconnect' below.
  send({ type: 'progress', runs }).catch(() => undefined);
}, PROGRESS_EVERY_MS);

let finishing: Promise<void> | undefined;
function finish(produced?: WorkerReport['produced']): Promise<void> {
  finishing ??= (async () => {
    clearInterval(progress);
    const cpu = cpuAtFirstRun === undefined ? undefined : process.cpuUsage(cpuAtFirstRun);
    await queue.close();
    const report: WorkerReport = {
      runs,
      startedAt,
      firstRunAt,
      lastRunAt,
      starts,
      cpuMs: cpu === undefined ? 0 : (cpu.user + cpu.system) / 1000,
      ...(produced === undefined ? {} : { produced }),
    };
    await send({ type: 'report', report });
    process.exit(0);
  })();
  return finishing;
}

/** Enqueues as planned (see protocol.ts), running the worker too if this process has one. */
async function produce(plan: ProducePlan): Promise<void> {
  const settled = async () => {
    await until(async () => (await queue.remaining()) === 0, 'the table to empty', 10);
    return wallClockMs();
  };
  if (plan.kind === 'batches') {
    // Every job is in the table before the worker starts: the drain is measured alone.
    const enqueueMs = await enqueueInBatches(queue, plan.jobs, plan.batch);
    if (!spec.worker) return finish({ enqueueMs });
    await startWorker();
    await until(() => runs >= plan.jobs, 'every job to run');
    return finish({ enqueueMs, settledAt: await settled() });
  }
  if (spec.worker) await startWorker();
  const commits: (number | null)[] = [];
  const total = plan.warmupJobs + plan.jobs;
  await enqueuePaced(queue, { ratePerSecond: plan.ratePerSecond, firstSeq: 0, count: total }, commits);
  if (!spec.worker) return finish({ commits });
  await until(() => runs >= total, 'every job to run');
  return finish({ commits, settledAt: await settled() });
}

async function onMessage(message: ParentMessage): Promise<void> {
  if (message.type === 'stop') return finish();
  if (spec.produce !== undefined) return produce(spec.produce);
  await startWorker();
}

process.on('message', (message: ParentMessage) => {
  onMessage(message).catch(async (error: unknown) => {
    await send({
      type: 'failed',
      message: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    process.exit(1);
  });
});
// The runner going away (ended, or killed) ends this process too.
process.on('disconnect', () => process.exit(0));
await send({ type: 'ready' });
