// The job-queue section: throughput of no-op jobs, and the latency from an enqueue's commit to its handler's
// start, for edgewatch's queue (src/jobs) on SQLite and PostgreSQL, beside graphile-worker on the same
// PostgreSQL in the same run. Every worker is a process of its own (worker-process.ts), driven over IPC.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { num, type Common } from '../lib/options.js';
import * as pg from '../lib/postgres.js';
import { PROJECT_ROOT, startChild, type Child } from '../lib/processes.js';
import * as r from '../lib/report.js';
import { childEnv } from '../lib/service.js';
import * as queues from './queues.js';
import type { WorkerReport, WorkerSpec } from './worker-process.js';

/** One job-queue measurement; graphile-worker's are anchors, measured beside the edgewatch case naming them. */
export interface JobCase extends r.Case {
  measure: 'throughput' | 'latency';
  queue: queues.QueueName;
  database: 'sqlite' | 'postgres';
  /** Worker processes (on SQLite the worker runs in the enqueuing process). */
  workers: number;
  goals?: { minJobsPerSecond?: number; minRatio?: number; maxP50Ms?: number; maxP99Ms?: number };
}

type Goals = JobCase['goals'];

/** `workers` 0: on SQLite, in the enqueuing process. */
function jobCase(measure: JobCase['measure'], queue: JobCase['queue'], workers: number, goals?: Goals) {
  const plural = workers === 1 ? '' : 'es';
  const where = workers === 0 ? 'SQLite, in process' : `PostgreSQL, ${workers} worker process${plural}`;
  const name = `jobs ${measure}: ${queue}, ${where}`;
  const anchors = queue === 'edgewatch' && workers > 0 ? [name.replace(queue, 'graphile-worker')] : undefined;
  const database = workers === 0 ? 'sqlite' : 'postgres';
  const c: JobCase = { name, measure, queue, database, workers: Math.max(workers, 1), goals, anchors };
  return queue === 'edgewatch' ? c : { ...c, anchor: true as const };
}

const LATENCY_GOALS = { maxP50Ms: 5, maxP99Ms: 20 };
// In the order they run: each anchor right after the case it anchors, so both see the same machine.
export const JOB_CASES: JobCase[] = [
  jobCase('throughput', 'edgewatch', 0, { minJobsPerSecond: 10_000 }),
  jobCase('throughput', 'edgewatch', 1, { minRatio: 1 }),
  jobCase('throughput', 'graphile-worker', 1),
  jobCase('throughput', 'edgewatch', 2, { minRatio: 1 }),
  jobCase('throughput', 'graphile-worker', 2),
  jobCase('latency', 'edgewatch', 0, LATENCY_GOALS),
  jobCase('latency', 'edgewatch', 1, LATENCY_GOALS),
  jobCase('latency', 'graphile-worker', 1),
];

const settings = (common: Common) => ({
  ...common,
  /** Jobs per throughput round, enqueued `batch` to a statement, and runs at once per worker process. */
  jobs: num('jobs'),
  batch: num('job-batch'),
  concurrency: num('job-concurrency'),
  rounds: num('job-rounds'),
  /** The latency: one job per transaction at this rate, 1 s untimed, then `latencySeconds`. */
  ratePerSecond: num('job-rate'),
  latencySeconds: num('job-seconds'),
});
type JobSettings = ReturnType<typeof settings>;
let files = 0;

/** The case's worker processes, or (worker: false) one process that only enqueues. */
function spawn(s: JobSettings, c: JobCase, db: WorkerSpec['database'], extra: Partial<WorkerSpec> = {}) {
  const spec = { queue: c.queue, worker: true, concurrency: s.concurrency, database: db, ...extra };
  const slug = `${String((files += 1)).padStart(3, '0')}-${c.measure}-${c.queue}-${c.database}`;
  const args = [...s.nodeOptions, '--import', 'tsx', path.join(PROJECT_ROOT, 'bench/jobs/worker-process.ts')];
  // NO_LOG_SUCCESS, as graphile-worker's own performance test sets: otherwise it logs a line per job.
  const env = childEnv({ BENCH_JOB_PROCESS: JSON.stringify(spec), NO_LOG_SUCCESS: '1' });
  const logFile = (n: number) =>
    path.join(s.workDir, 'jobs', `${slug}-${spec.worker ? n + 1 : 'producer'}.log`);
  // One that fails stops the run, and the others are killed with the runner.
  const start = (_: unknown, n: number) => startChild({ args, env, logFile: logFile(n), ready: 'message' });
  return Promise.all(Array.from({ length: spec.worker ? c.workers : 1 }, start));
}

const report = (child: Child) => child.message<WorkerReport>('report');
const runs = (children: Child[]) =>
  children.reduce((sum, child) => sum + (child.latest<{ runs: number }>('progress')?.runs ?? 0), 0);
/** Waits for `condition`, failing at once if a process fails or exits meanwhile. */
const watched = (children: Child[], condition: () => boolean | Promise<boolean>, what: string) =>
  Promise.race([
    r.until(condition, what, 10),
    ...children.map((c) => report(c).then(() => new Promise(() => 0))),
  ]);
const tell = (children: Child[], type: 'go' | 'stop') => children.forEach((child) => child.send({ type }));

/**
 * Where the case's processes find the queue. On PostgreSQL a fresh schema with the queue's tables, and the
 * runner's own handle on it; on SQLite a fresh file, which the one process enqueues into itself (its queue
 * wakes its worker in process, as in the service).
 */
async function openTarget(s: JobSettings, db: pg.BenchDatabase | undefined, c: JobCase) {
  if (db === undefined) {
    const file = path.join(s.workDir, 'jobs', `${(files += 1)}.db`);
    return { database: { kind: 'sqlite' as const, file }, queue: undefined, close: async () => undefined };
  }
  const schema = await db.createSchema(c.queue === 'edgewatch' ? 'edgewatch' : 'graphile');
  if (c.queue === 'graphile-worker') await queues.migrateGraphileWorker(db.url, schema.name);
  const queue =
    c.queue === 'edgewatch'
      ? await queues.openEdgewatch({ kind: 'postgres', url: db.url }, schema.name, true)
      : await queues.openGraphileWorker(db.url, schema.name);
  const database = { kind: 'postgres' as const, url: db.url, schema: schema.name };
  return { database, queue, close: () => queue.close().then(schema.drop) };
}

/** When the enqueuer was done and saw the table empty, and PostgreSQL's CPU over the drain. */
type Timing = { enqueueMs: number; settledAt: number; dbMs?: number | undefined };

function summarize(c: JobCase, jobs: number, reports: WorkerReport[], t: Timing) {
  const { enqueueMs, settledAt, dbMs } = t;
  const first = Math.min(...reports.map((x) => x.firstRunAt));
  const last = Math.max(...reports.map((x) => x.lastRunAt));
  const runs = reports.reduce((sum, x) => sum + x.runs, 0);
  // A job run twice, in one process or in two, counts twice in the runs and once among the jobs that ran.
  const ran = new Set(reports.flatMap((x) => x.starts.flatMap((at, seq) => (at === null ? [] : [seq])))).size;
  const drainPerSecond = (jobs * 1000) / (last - first);
  const perJob = (ms: number | undefined) => r.fixed(ms === undefined ? undefined : (ms * 1000) / jobs, 0);
  const firstAfterStart = (first - Math.min(...reports.map((x) => x.startedAt))).toFixed(0);
  const row = [c.name, r.whole((jobs * 1000) / enqueueMs), r.whole(drainPerSecond), '', firstAfterStart];
  row.push((settledAt - last).toFixed(0), reports.map((x) => r.whole(x.runs)).join(' + '));
  row.push(perJob(reports.reduce((sum, x) => sum + x.cpuMs, 0)), perJob(dbMs));
  return { drainPerSecond, row, runs, ranTwice: runs - ran };
}

async function throughput(s: JobSettings, db: pg.BenchDatabase | undefined, c: JobCase) {
  const { jobs, batch } = s;
  const target = await openTarget(s, db, c);
  const { queue } = target;
  let workers: Child[] = [];
  try {
    if (queue === undefined) {
      workers = await spawn(s, c, target.database, { produce: { kind: 'batches', jobs, batch } });
      tell(workers, 'go');
      const done = await report(workers[0]!);
      return summarize(c, jobs, [done], { enqueueMs: done.enqueueMs!, settledAt: done.settledAt! });
    }
    workers = await spawn(s, c, target.database);
    // Every job is in the table before the workers start: the drain is measured alone.
    const enqueueMs = await queues.enqueueInBatches(queue, jobs, batch);
    const cpuBefore = await pg.databaseCpuMs(db!.url, db!.name);
    tell(workers, 'go');
    await watched(workers, () => runs(workers) >= jobs, `${jobs} runs`);
    await watched(workers, async () => (await queue.remaining()) === 0, 'an empty table');
    const settledAt = queues.wallClockMs();
    const dbMs = pg.cpuBetween(cpuBefore, await pg.databaseCpuMs(db!.url, db!.name));
    tell(workers, 'stop');
    return summarize(c, jobs, await Promise.all(workers.map(report)), { enqueueMs, settledAt, dbMs });
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await target.close();
  }
}

async function latency(s: JobSettings, db: pg.BenchDatabase | undefined, c: JobCase): Promise<string[]> {
  const warmup = s.ratePerSecond; // 1 s untimed
  const total = warmup + s.ratePerSecond * s.latencySeconds;
  const produce = { kind: 'paced' as const, ratePerSecond: s.ratePerSecond, jobs: total };
  const target = await openTarget(s, db, c);
  const children: Child[] = [];
  const starts: (number | null)[] = [];
  let commits: (number | null)[] = [];
  try {
    // On PostgreSQL the enqueuer is a process of its own, so nothing else in its event loop delays the moment
    // it notes a commit.
    const [workers, producers] = await Promise.all([
      spawn(s, c, target.database, target.queue === undefined ? { produce } : {}),
      target.queue === undefined ? [] : spawn(s, c, target.database, { produce, worker: false }),
    ]);
    children.push(...workers, ...producers);
    tell(workers, 'go');
    if (producers.length > 0) {
      await Promise.all(workers.map((worker) => worker.message('started')));
      // A moment for the worker's listening connection to settle; the warm-up jobs come after it anyway.
      await sleep(200);
      tell(producers, 'go');
      commits = (await report(producers[0]!)).commits!;
      await watched(workers, () => runs(workers) >= total, `${total} runs`);
      tell(workers, 'stop');
    }
    for (const done of await Promise.all(workers.map(report))) {
      done.starts.forEach((at, seq) => at !== null && (starts[seq] = at));
      commits = done.commits ?? commits;
    }
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await target.close();
  }
  const latencies = commits.flatMap((at, seq) =>
    seq < warmup || at === null || !starts[seq] ? [] : [starts[seq] - at],
  );
  if (latencies.length === 0) throw new Error(`${c.name}: no job ran`);
  const timed = commits.slice(warmup).filter((at) => at !== null);
  const rate = ((timed.length - 1) * 1000) / (Math.max(...timed) - Math.min(...timed));
  const ms = [0, 50, 99, 100].map((p) => r.percentile(latencies, p));
  const early = latencies.filter((x) => x < 0).length;
  return [c.name, String(latencies.length), r.whole(rate), String(early), ...ms.map((x) => x.toFixed(2))];
}

export async function runJobSection(cases: JobCase[], common: Common): Promise<r.SectionResult> {
  const s = settings(common);
  const out = r.emptyResult('Job queue: no-op jobs, one job kind');
  fs.mkdirSync(path.join(s.workDir, 'jobs'), { recursive: true });
  const fresh = 'a fresh database, a fresh schema per measurement';
  const runnable = await pg.runnable(cases, s.postgresUrl, out, fresh);
  const rounds = new r.Rounds<Awaited<ReturnType<typeof throughput>>>((x) => x.drainPerSecond);
  const latencies: string[][] = [];
  const postgres = runnable.some((c) => c.database === 'postgres');
  const db = postgres ? await pg.createBenchDatabase(s.postgresUrl) : undefined;
  try {
    const on = (c: JobCase) => (c.database === 'postgres' ? db : undefined);
    // Rounds take turns, so a neighbour's burst of work falls on several cases rather than on one.
    for (let round = 1; round <= s.rounds; round += 1)
      for (const c of runnable.filter((x) => x.measure === 'throughput')) {
        r.progress(`round ${round}/${s.rounds}: ${c.name}`);
        rounds.add(c.name, await throughput(s, on(c), c));
      }
    for (const c of runnable.filter((x) => x.measure === 'latency')) {
      r.progress(`${c.name}: ${s.ratePerSecond} jobs/s for ${s.latencySeconds} s`);
      const row = await latency(s, on(c), c);
      latencies.push(row);
      if (c.goals?.maxP50Ms) out.checks.push(r.goal(c.name, 'p50', Number(row[5]), c.goals.maxP50Ms, 'ms'));
      if (c.goals?.maxP99Ms) out.checks.push(r.goal(c.name, 'p99', Number(row[6]), c.goals.maxP99Ms, 'ms'));
    }
  } finally {
    await db?.drop();
  }
  const rows = runnable.flatMap((c) => {
    const t = rounds.median(c.name);
    if (t === undefined) return [];
    const anchor = rounds.median(c.anchors?.[0] ?? '');
    const ratio = anchor && t.drainPerSecond / anchor.drainPerSecond;
    t.row[3] = ratio === undefined ? '' : ratio.toFixed(2);
    const { minJobsPerSecond, minRatio } = c.goals ?? {};
    if (minJobsPerSecond)
      out.checks.push(r.goal(c.name, 'drain', t.drainPerSecond, minJobsPerSecond, 'jobs/s', false));
    const label = "jobs/s ÷ graphile-worker's (same run, same concurrency)";
    if (minRatio) out.checks.push(r.goal(c.name, label, ratio ?? NaN, minRatio, '×', false));
    if (t.ranTwice > 0 || t.runs !== s.jobs)
      out.warnings.push(`${c.name}: runs ${t.row[6]}, ${t.ranTwice} ran twice`);
    return [t.row];
  });
  out.output.push(
    `concurrency ${s.concurrency} per worker process for both queues; graphile-worker with ` +
      `${JSON.stringify(queues.graphileWorkerOptions(s.concurrency))} and NO_LOG_SUCCESS=1; worker processes run ` +
      `node ${[...s.nodeOptions, '--import tsx'].join(' ')}`,
  );
  r.addTable(
    out,
    `Throughput, ${r.whole(s.jobs)} jobs enqueued ${s.batch} to a statement, then drained (first run's start to ` +
      `last run's start), median of ${s.rounds} round(s):`,
    'measurement | enqueue (jobs/s) | drain (jobs/s) | ratio to graphile-worker | first run after start (ms) | ' +
      'table empty after last run (ms) | runs per process | worker CPU per job (µs) | PostgreSQL CPU per job (µs)',
    rows,
  );
  r.addTable(
    out,
    `Start latency, ${s.ratePerSecond} jobs/s for ${s.latencySeconds} s after 1 s untimed; the enqueuing transaction's ` +
      "commit to the handler's start:",
    'measurement | jobs | achieved rate (jobs/s) | started before the commit was seen | min (ms) | p50 (ms) | ' +
      'p99 (ms) | max (ms)',
    latencies,
  );
  return out;
}
