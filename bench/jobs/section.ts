// The job-queue section: no-op jobs' throughput and commit-to-start latency on edgewatch's queue (SQLite and
// PostgreSQL) beside graphile-worker (same PostgreSQL, same run); every worker a process of its own, over IPC.
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

type Goals = { minJobsPerSecond?: number; minRatio?: number; maxP50Ms?: number; maxP99Ms?: number };

/**
 * One job-queue measurement; graphile-worker's are anchors, measured beside the edgewatch case naming them.
 * `workers` 0: on SQLite, in the enqueuing process.
 */
function jobCase(measure: 'throughput' | 'latency', queue: queues.QueueName, workers: number, goals?: Goals) {
  const where = workers === 0 ? 'SQLite, in process' : `PostgreSQL, ${workers} worker process`;
  const name = `jobs ${measure}: ${queue}, ${where}${workers > 1 ? 'es' : ''}`;
  const database = workers === 0 ? 'sqlite' : 'postgres';
  const anchor = queue === 'graphile-worker' ? (true as const) : undefined;
  const anchors = queue === 'edgewatch' && workers > 0 ? [name.replace(queue, 'graphile-worker')] : undefined;
  return { name, measure, queue, database, workers: Math.max(workers, 1), goals, anchor, anchors };
}
export type JobCase = ReturnType<typeof jobCase>;

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

// `concurrency`: jobs at once per worker process. Latency: one job per transaction at `ratePerSecond`.
const settings = (common: Common, db: pg.BenchDatabase | undefined) => ({
  ...{ ...common, db, jobs: num('jobs'), batch: num('job-batch'), concurrency: num('job-concurrency') },
  ...{ rounds: num('job-rounds'), ratePerSecond: num('job-rate'), latencySeconds: num('job-seconds') },
});
type JobSettings = ReturnType<typeof settings>;

const report = (child: Child) => child.message<WorkerReport>('report');
const runs = (children: Child[]) =>
  children.reduce((sum, child) => sum + (child.latest<{ runs: number }>('progress')?.runs ?? 0), 0);
/** Waits for `condition`, failing at once if a process fails or exits meanwhile (a message never sent). */
const watched = (children: Child[], condition: () => boolean | Promise<boolean>, what: string) =>
  Promise.race([r.until(condition, what, 10), ...children.map((child) => child.message('none'))]);
const tell = (children: Child[], type: 'go' | 'stop') => children.forEach((child) => child.send({ type }));

/** `queue`: the runner's own, on PostgreSQL; `start`: the case's workers, or (worker: false) an enqueuer. */
type Fresh = { queue?: queues.QueueUnderTest; start: (extra?: Partial<WorkerSpec>) => Promise<Child[]> };
let measurements = 0;

/**
 * Runs `measure` on a fresh queue: on PostgreSQL a fresh schema with the queue's tables; on SQLite a fresh
 * file, which the one process enqueues into itself (its queue wakes its worker in process, as in the service).
 */
async function onFreshQueue<T>(s: JobSettings, c: JobCase, measure: (fresh: Fresh) => Promise<T>) {
  const slug = path.join(s.workDir, 'jobs', `${(measurements += 1)}-${c.measure}-${c.queue}-${c.database}`);
  const schema = c.database === 'postgres' ? await s.db!.createSchema(c.queue.replace('-', '_')) : undefined;
  const database: queues.QueueDatabase = schema
    ? { kind: 'postgres', url: s.db!.url, schema: schema.name }
    : { kind: 'sqlite', file: `${slug}.db` };
  const queue = schema && (await queues.openQueue(c.queue, database, true));
  const args = [...s.nodeOptions, '--import', 'tsx', path.join(PROJECT_ROOT, 'bench/jobs/worker-process.ts')];
  const children: Child[] = [];
  const start = async (extra: Partial<WorkerSpec> = {}) => {
    const spec = { queue: c.queue, worker: true, concurrency: s.concurrency, database, ...extra };
    // NO_LOG_SUCCESS, as graphile-worker's own performance test sets: otherwise it logs a line per job.
    const env = childEnv({ BENCH_JOB_PROCESS: JSON.stringify(spec), NO_LOG_SUCCESS: '1' });
    const one = (_: unknown, n: number) =>
      startChild({ args, env, logFile: `${slug}-${spec.worker ? n + 1 : 'producer'}.log`, ready: 'message' });
    // One that fails stops the run, and the others are killed with the runner.
    const started = await Promise.all(Array.from({ length: spec.worker ? c.workers : 1 }, one));
    children.push(...started);
    return started;
  };
  try {
    return await measure({ queue, start });
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await queue?.close();
    await schema?.drop();
  }
}

/** SQLite: the one process enqueues, runs every job and reports once the table is empty. */
async function alone(start: Fresh['start'], produce: WorkerSpec['produce']) {
  const [child] = await start({ produce });
  tell([child!], 'go');
  return report(child!);
}

/** A round; every job is in the table before the workers start, so the drain is measured alone. */
const throughput = (s: JobSettings, c: JobCase) =>
  onFreshQueue(s, c, async ({ queue, start }) => {
    const { jobs, batch } = s;
    if (queue === undefined) {
      const done = await alone(start, { kind: 'batches', jobs, batch });
      return summarize(c, jobs, [done], { enqueueMs: done.enqueueMs!, settledAt: done.settledAt! });
    }
    const workers = await start();
    const enqueueMs = await queues.enqueueInBatches(queue, jobs, batch);
    const cpuBefore = await pg.databaseCpuMs(s.db!.url, s.db!.name);
    tell(workers, 'go');
    await watched(workers, () => runs(workers) >= jobs, `${jobs} runs`);
    await watched(workers, async () => (await queue.remaining()) === 0, 'an empty table');
    const settledAt = queues.wallClockMs();
    const dbMs = pg.cpuBetween(cpuBefore, await pg.databaseCpuMs(s.db!.url, s.db!.name));
    tell(workers, 'stop');
    return summarize(c, jobs, await Promise.all(workers.map(report)), { enqueueMs, settledAt, dbMs });
  });

/** How long the enqueuing took, when the table was seen empty, and PostgreSQL's CPU over the drain. */
type Timing = { enqueueMs: number; settledAt: number; dbMs?: number | undefined };
function summarize(c: JobCase, jobs: number, reports: WorkerReport[], t: Timing) {
  const first = Math.min(...reports.map((x) => x.firstRunAt));
  const last = Math.max(...reports.map((x) => x.lastRunAt));
  const runs = reports.reduce((sum, x) => sum + x.runs, 0);
  // A job run twice, in one process or in two, counts twice in the runs and once among the jobs that ran.
  const ran = new Set(reports.flatMap((x) => x.starts.flatMap((at, seq) => (at === null ? [] : [seq])))).size;
  const drainPerSecond = (jobs * 1000) / (last - first);
  const perJob = (ms: number | undefined) => r.fixed(ms === undefined ? undefined : (ms * 1000) / jobs, 0);
  const firstAfterStart = (first - Math.min(...reports.map((x) => x.startedAt))).toFixed(0);
  // Cell 3, the ratio to graphile-worker, is filled in once every round is in.
  const row = [c.name, r.whole((jobs * 1000) / t.enqueueMs), r.whole(drainPerSecond), '', firstAfterStart];
  row.push((t.settledAt - last).toFixed(0), reports.map((x) => r.whole(x.runs)).join(' + '));
  row.push(perJob(reports.reduce((sum, x) => sum + x.cpuMs, 0)), perJob(t.dbMs));
  return { drainPerSecond, row, runs, ranTwice: runs - ran };
}

async function latency(s: JobSettings, c: JobCase): Promise<string[]> {
  const warmup = s.ratePerSecond; // 1 s untimed
  const total = warmup + s.ratePerSecond * s.latencySeconds;
  const produce = { kind: 'paced' as const, ratePerSecond: s.ratePerSecond, jobs: total };
  const reports = await onFreshQueue(s, c, async ({ queue, start }) => {
    if (queue === undefined) return [await alone(start, produce)];
    // The enqueuer a process of its own, so that nothing else in its event loop delays its noting a commit.
    const [workers, producer] = await Promise.all([start(), start({ produce, worker: false })]);
    tell(workers, 'go');
    await Promise.all(workers.map((worker) => worker.message('started')));
    // A moment for the worker's listening connection to settle; the warm-up jobs come after it anyway.
    await sleep(200);
    tell(producer, 'go');
    const produced = await report(producer[0]!);
    await watched(workers, () => runs(workers) >= total, `${total} runs`);
    tell(workers, 'stop');
    return [produced, ...(await Promise.all(workers.map(report)))];
  });
  const commits = reports.find((x) => x.commits)?.commits ?? [];
  const starts: (number | null)[] = [];
  for (const x of reports) x.starts.forEach((at, seq) => at !== null && (starts[seq] = at));
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
  const out = r.emptyResult('Job queue: no-op jobs, one job kind');
  fs.mkdirSync(path.join(common.workDir, 'jobs'), { recursive: true });
  const fresh = 'a fresh database, a fresh schema per measurement';
  const runnable = await pg.runnable(cases, common.postgresUrl, out, fresh);
  const postgres = runnable.some((c) => c.database === 'postgres');
  const s = settings(common, postgres ? await pg.createBenchDatabase(common.postgresUrl) : undefined);
  const rounds = new r.Rounds<ReturnType<typeof summarize>>((x) => x.drainPerSecond);
  const latencies: string[][] = [];
  try {
    // Rounds take turns, so a neighbour's burst of work falls on several cases rather than on one.
    for (let round = 1; round <= s.rounds; round += 1)
      for (const c of runnable.filter((x) => x.measure === 'throughput')) {
        r.progress(`round ${round}/${s.rounds}: ${c.name}`);
        rounds.add(c.name, await throughput(s, c));
      }
    for (const c of runnable.filter((x) => x.measure === 'latency')) {
      r.progress(`${c.name}: ${s.ratePerSecond} jobs/s for ${s.latencySeconds} s`);
      const row = await latency(s, c);
      latencies.push(row);
      if (c.goals?.maxP50Ms) out.checks.push(r.goal(c.name, 'p50', Number(row[5]), c.goals.maxP50Ms, 'ms'));
      if (c.goals?.maxP99Ms) out.checks.push(r.goal(c.name, 'p99', Number(row[6]), c.goals.maxP99Ms, 'ms'));
    }
  } finally {
    await s.db?.drop();
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
  const graphile = JSON.stringify(queues.graphileWorkerOptions(s.concurrency));
  out.output.push(
    `concurrency ${s.concurrency} per worker process for both queues; graphile-worker with ${graphile} and ` +
      `NO_LOG_SUCCESS=1; worker processes run node ${[...s.nodeOptions, '--import tsx'].join(' ')}`,
  );
  r.addTable(
    out,
    `Throughput, ${r.whole(s.jobs)} jobs enqueued ${s.batch} to a statement, then drained (first run's ` +
      `start to last run's start), median of ${s.rounds} round(s):`,
    'measurement | enqueue (jobs/s) | drain (jobs/s) | ratio to graphile-worker | first run after start (ms) | ' +
      'table empty after last run (ms) | runs per process | worker CPU per job (µs) | PostgreSQL CPU per job (µs)',
    rows,
  );
  r.addTable(
    out,
    `Start latency, ${s.ratePerSecond} jobs/s for ${s.latencySeconds} s after 1 s untimed; the enqueuing ` +
      "transaction's commit to the handler's start:",
    'measurement | jobs | achieved rate (jobs/s) | started before the commit was seen | min (ms) | p50 (ms) | ' +
      'p99 (ms) | max (ms)',
    latencies,
  );
  return out;
}
