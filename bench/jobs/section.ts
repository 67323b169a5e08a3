// The job-queue section of `npm run bench`: throughput of no-op jobs and the latency from an enqueue's commit to
// its handler's start, for edgewatch's queue (src/jobs) on SQLite and PostgreSQL, beside graphile-worker on the
// same PostgreSQL in the same run.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { redactUrl } from '../../src/observability/logger.js';
import type { Check } from '../lib/report.js';
import { percentile } from '../lib/stats.js';
import type { JobCase } from './cases.js';
import {
  cpuBetween,
  createBenchDatabase,
  databaseCpuMs,
  probePostgres,
  type BenchDatabase,
} from './postgres.js';
import { enqueueInBatches, wallClockMs } from './produce.js';
import { startWorkerProcess, type WorkerProcess } from './processes.js';
import type { ProcessDatabase, ProducePlan, WorkerReport } from './protocol.js';
import {
  graphileWorkerOptions,
  migrateGraphileWorker,
  openEdgewatch,
  openGraphileWorker,
  type QueueUnderTest,
} from './queues.js';
import { latencyRows, throughputRows, type LatencyResult, type ThroughputResult } from './report.js';

export interface JobSettings {
  /** Jobs per throughput measurement. */
  jobs: number;
  /** Jobs per enqueue statement in a throughput measurement. */
  batch: number;
  /** Runs at once per worker process, for both queues. */
  concurrency: number;
  /** The latency measurement's steady rate, one job per transaction. */
  ratePerSecond: number;
  latencySeconds: number;
  /** Untimed jobs at the same rate before the timed ones. */
  latencyWarmupSeconds: number;
  /** Throughput rounds; each case reports its median round. */
  rounds: number;
  /** An existing database of the server to connect to first (the run's own database is created from it). */
  postgresUrl: string;
  /** Node options of every worker process (the service's, as `npm start` runs it). */
  nodeOptions: string[];
  workDir: string;
}

export interface JobSectionResult {
  /** Lines to print: a heading, the two tables, notes. */
  output: string[];
  checks: Check[];
  warnings: string[];
}

const DEADLINE_MS = 120_000;

function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}

async function until(condition: () => boolean | Promise<boolean>, what: string, everyMs = 5): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Waits for `wait`, failing at once if a worker process fails or exits meanwhile. */
async function watched(workers: WorkerProcess[], wait: Promise<void>): Promise<void> {
  const failures = workers.map((worker) =>
    worker.report.then(
      () => new Promise<never>(() => undefined),
      (error: unknown) => Promise.reject(error instanceof Error ? error : new Error(String(error))),
    ),
  );
  await Promise.race([wait, ...failures]);
}

interface Context {
  settings: JobSettings;
  database: BenchDatabase | undefined;
  logDir: string;
  files: number;
}

/** A new path in the run's directory for this case's files (`.log`, `.db`). */
function caseFile(context: Context, c: JobCase, extension: string): string {
  context.files += 1;
  const slug = `${c.measure}-${c.queue}-${c.database}-${c.workers}`;
  return path.join(context.logDir, `${String(context.files).padStart(3, '0')}-${slug}.${extension}`);
}

/** The case's worker processes (or, with `worker: false`, one process that only enqueues). */
async function spawnWorkers(
  context: Context,
  c: JobCase,
  database: ProcessDatabase,
  options: { produce?: ProducePlan; worker?: boolean } = {},
): Promise<WorkerProcess[]> {
  const env: Record<string, string> = c.queue === 'graphile-worker' ? { NO_LOG_SUCCESS: '1' } : {};
  const worker = options.worker ?? true;
  const spec = {
    queue: c.queue,
    worker,
    concurrency: context.settings.concurrency,
    database,
    ...(options.produce === undefined ? {} : { produce: options.produce }),
  };
  const starting = Array.from({ length: worker ? c.workers : 1 }, () =>
    startWorkerProcess(spec, {
      nodeOptions: context.settings.nodeOptions,
      logFile: caseFile(context, c, worker ? 'log' : 'producer.log'),
      env,
    }),
  );
  const outcomes = await Promise.allSettled(starting);
  const workers = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(workers.map((worker) => worker.close()));
    throw failed.reason;
  }
  return workers;
}

/** A fresh schema with the queue's tables in it, the runner's own handle on the queue, and the way out. */
async function openOnPostgres(
  context: Context,
  c: JobCase,
): Promise<{ database: ProcessDatabase; queue: QueueUnderTest; close(): Promise<void> }> {
  const db = context.database;
  if (db === undefined) throw new Error('PostgreSQL is not available');
  const schema = await db.createSchema(c.queue === 'edgewatch' ? 'edgewatch' : 'graphile');
  let queue: QueueUnderTest;
  try {
    if (c.queue === 'edgewatch') {
      queue = await openEdgewatch({ kind: 'postgres', url: db.url }, schema.name, { migrate: true });
    } else {
      await migrateGraphileWorker(db.url, schema.name);
      queue = await openGraphileWorker(db.url, schema.name);
    }
  } catch (error) {
    await schema.drop();
    throw error;
  }
  return {
    database: { kind: 'postgres', url: db.url, schema: schema.name },
    queue,
    async close() {
      await queue.close();
      await schema.drop();
    },
  };
}

function summarizeThroughput(
  c: JobCase,
  jobs: number,
  enqueueMs: number,
  reports: WorkerReport[],
  settledAt: number,
  databaseCpuMs: number | undefined,
): ThroughputResult {
  const defined = (values: (number | null)[]) => values.filter((value): value is number => value !== null);
  const first = Math.min(...defined(reports.map((r) => r.firstRunAt)));
  const last = Math.max(...defined(reports.map((r) => r.lastRunAt)));
  const started = Math.min(...defined(reports.map((r) => r.startedAt)));
  const runs = reports.reduce((sum, r) => sum + r.runs, 0);
  // A job run twice, in one process or in two, counts twice in `runs` and once among the jobs that ran.
  const ranTwice = runs - new Set(reports.flatMap((r) => seqsRun(r))).size;
  const drainMs = last - first;
  const workerCpuMs = reports.reduce((sum, r) => sum + r.cpuMs, 0);
  return {
    name: c.name,
    workers: c.workers,
    enqueuePerSecond: (jobs * 1000) / enqueueMs,
    drainMs,
    drainPerSecond: (jobs * 1000) / drainMs,
    startupMs: first - started,
    settleMs: settledAt - last,
    runsPerProcess: reports.map((r) => r.runs),
    runs,
    ranTwice,
    workerCpuUsPerJob: (workerCpuMs * 1000) / jobs,
    databaseCpuUsPerJob: databaseCpuMs === undefined ? undefined : (databaseCpuMs * 1000) / jobs,
  };
}

function seqsRun(report: WorkerReport): number[] {
  const seqs: number[] = [];
  report.starts.forEach((at, seq) => {
    if (at !== null) seqs.push(seq);
  });
  return seqs;
}

async function throughputOnSqlite(context: Context, c: JobCase): Promise<ThroughputResult> {
  const { jobs, batch } = context.settings;
  const file = caseFile(context, c, 'db');
  const [worker] = await spawnWorkers(
    context,
    c,
    { kind: 'sqlite', file },
    { produce: { kind: 'batches', jobs, batch } },
  );
  if (worker === undefined) throw new Error('no worker process');
  try {
    worker.send({ type: 'go' });
    const report = await worker.report;
    const { enqueueMs, settledAt } = report.produced ?? {};
    if (enqueueMs === undefined || settledAt === undefined)
      throw new Error('the SQLite process did not report');
    return summarizeThroughput(c, jobs, enqueueMs, [report], settledAt, undefined);
  } finally {
    await worker.close();
  }
}

async function throughputOnPostgres(context: Context, c: JobCase): Promise<ThroughputResult> {
  const { jobs, batch } = context.settings;
  const db = context.database;
  if (db === undefined) throw new Error('PostgreSQL is not available');
  const opened = await openOnPostgres(context, c);
  let workers: WorkerProcess[] = [];
  try {
    workers = await spawnWorkers(context, c, opened.database);
    const enqueueMs = await enqueueInBatches(opened.queue, jobs, batch);
    const cpuBefore = await databaseCpuMs(db.url, db.name);
    for (const worker of workers) worker.send({ type: 'go' });
    const total = () => workers.reduce((sum, worker) => sum + worker.runs(), 0);
    await watched(
      workers,
      until(() => total() >= jobs, `${jobs} runs`),
    );
    await watched(
      workers,
      until(async () => (await opened.queue.remaining()) === 0, 'the table to empty', 10),
    );
    const settledAt = wallClockMs();
    const cpuAfter = await databaseCpuMs(db.url, db.name);
    for (const worker of workers) worker.send({ type: 'stop' });
    const reports = await Promise.all(workers.map((worker) => worker.report));
    return summarizeThroughput(c, jobs, enqueueMs, reports, settledAt, cpuBetween(cpuBefore, cpuAfter));
  } finally {
    await Promise.all(workers.map((worker) => worker.close()));
    await opened.close();
  }
}

function summarizeLatency(
  c: JobCase,
  warmupJobs: number,
  total: number,
  commits: (number | null)[],
  starts: (number | null)[],
): LatencyResult {
  const latencies: number[] = [];
  let missing = 0;
  for (let seq = warmupJobs; seq < total; seq += 1) {
    const commit = commits[seq];
    const start = starts[seq];
    if (commit === null || commit === undefined || start === null || start === undefined) missing += 1;
    else latencies.push(start - commit);
  }
  if (latencies.length === 0) throw new Error(`${c.name}: no job ran`);
  const timedCommits = commits.slice(warmupJobs, total).filter((at): at is number => typeof at === 'number');
  const spanMs = Math.max(...timedCommits) - Math.min(...timedCommits);
  return {
    name: c.name,
    jobs: latencies.length,
    missing,
    beforeCommitSeen: latencies.filter((ms) => ms < 0).length,
    achievedRate: spanMs > 0 ? ((timedCommits.length - 1) * 1000) / spanMs : 0,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: Math.max(...latencies),
    minMs: Math.min(...latencies),
  };
}

function latencyPlan(settings: JobSettings) {
  const warmupJobs = Math.round(settings.ratePerSecond * settings.latencyWarmupSeconds);
  const jobs = Math.round(settings.ratePerSecond * settings.latencySeconds);
  return { warmupJobs, jobs, total: warmupJobs + jobs };
}

async function latencyOnSqlite(context: Context, c: JobCase): Promise<LatencyResult> {
  const { warmupJobs, jobs, total } = latencyPlan(context.settings);
  const file = caseFile(context, c, 'db');
  const plan: ProducePlan = {
    kind: 'paced',
    ratePerSecond: context.settings.ratePerSecond,
    warmupJobs,
    jobs,
  };
  const [worker] = await spawnWorkers(context, c, { kind: 'sqlite', file }, { produce: plan });
  if (worker === undefined) throw new Error('no worker process');
  try {
    worker.send({ type: 'go' });
    const report = await worker.report;
    const commits = report.produced?.commits;
    if (commits === undefined) throw new Error('the SQLite process did not report its commits');
    return summarizeLatency(c, warmupJobs, total, commits, report.starts);
  } finally {
    await worker.close();
  }
}

async function latencyOnPostgres(context: Context, c: JobCase): Promise<LatencyResult> {
  const { warmupJobs, jobs, total } = latencyPlan(context.settings);
  const opened = await openOnPostgres(context, c);
  let workers: WorkerProcess[] = [];
  let producers: WorkerProcess[] = [];
  try {
    // The enqueuer is a process of its own, so that nothing else in its event loop delays the moment it
    // notes a commit (the runner's heap, after the load scenarios, is large).
    const plan: ProducePlan = {
      kind: 'paced',
      ratePerSecond: context.settings.ratePerSecond,
      warmupJobs,
      jobs,
    };
    [workers, producers] = await Promise.all([
      spawnWorkers(context, c, opened.database),
      spawnWorkers(context, c, opened.database, { produce: plan, worker: false }),
    ]);
    for (const worker of workers) worker.send({ type: 'go' });
    await watched(
      workers,
      Promise.all(workers.map((worker) => worker.started)).then(() => undefined),
    );
    // A moment for the worker's listening connection to settle; the warm-up jobs come after it anyway.
    await sleep(200);
    for (const producer of producers) producer.send({ type: 'go' });
    const [produced] = await Promise.all(producers.map((producer) => producer.report));
    const commits = produced?.produced?.commits;
    if (commits === undefined) throw new Error('the enqueuing process did not report its commits');
    const runs = () => workers.reduce((sum, worker) => sum + worker.runs(), 0);
    await watched(
      workers,
      until(() => runs() >= total, `${total} runs`),
    );
    for (const worker of workers) worker.send({ type: 'stop' });
    const reports = await Promise.all(workers.map((worker) => worker.report));
    const starts: (number | null)[] = [];
    for (const report of reports) {
      report.starts.forEach((at, seq) => {
        if (at !== null) starts[seq] = at;
      });
    }
    return summarizeLatency(c, warmupJobs, total, commits, starts);
  } finally {
    await Promise.all([...workers, ...producers].map((process) => process.close()));
    await opened.close();
  }
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function throughputChecks(
  c: JobCase,
  result: ThroughputResult,
  anchor: ThroughputResult | undefined,
): Check[] {
  const checks: Check[] = [];
  const { minJobsPerSecond, minRatio } = c.goals ?? {};
  if (minJobsPerSecond !== undefined) {
    const met = result.drainPerSecond >= minJobsPerSecond;
    const short = minJobsPerSecond - result.drainPerSecond;
    checks.push({
      subject: c.name,
      goal: `≥ ${count(minJobsPerSecond)} jobs/s`,
      actual:
        `${count(result.drainPerSecond)} jobs/s` +
        (met ? '' : `; ${count(short)} jobs/s (${((100 * short) / minJobsPerSecond).toFixed(0)} %) short`),
      met,
    });
  }
  if (minRatio !== undefined) {
    if (anchor === undefined) {
      checks.push({
        subject: c.name,
        goal: `jobs/s ≥ ${minRatio} × graphile-worker`,
        actual: 'n/a',
        met: false,
      });
    } else {
      const ratio = result.drainPerSecond / anchor.drainPerSecond;
      const met = ratio >= minRatio;
      checks.push({
        subject: c.name,
        goal: `jobs/s ≥ ${minRatio.toFixed(1)} × graphile-worker's (same run, same concurrency)`,
        actual:
          `${ratio.toFixed(2)}: ${count(result.drainPerSecond)} against ${count(anchor.drainPerSecond)} jobs/s` +
          (met
            ? ''
            : `; ${count(minRatio * anchor.drainPerSecond - result.drainPerSecond)} jobs/s ` +
              `(${(100 * (1 - ratio / minRatio)).toFixed(0)} %) short`),
        met,
      });
    }
  }
  return checks;
}

function latencyChecks(c: JobCase, result: LatencyResult): Check[] {
  const checks: Check[] = [];
  const goal = (label: string, value: number, max: number | undefined) => {
    if (max === undefined) return;
    const met = value <= max;
    checks.push({
      subject: c.name,
      goal: `${label} ≤ ${max} ms`,
      actual: `${value.toFixed(2)} ms` + (met ? '' : `; ${(value - max).toFixed(2)} ms over`),
      met,
    });
  };
  goal('p50', result.p50Ms, c.goals?.maxP50Ms);
  goal('p99', result.p99Ms, c.goals?.maxP99Ms);
  return checks;
}

/** Of several rounds, the one with the median drain rate. */
function medianRound(results: ThroughputResult[]): ThroughputResult {
  const sorted = [...results].sort((a, b) => a.drainPerSecond - b.drainPerSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (median === undefined) throw new Error('no rounds measured');
  return median;
}

export async function runJobSection(cases: JobCase[], settings: JobSettings): Promise<JobSectionResult> {
  const output: string[] = [];
  const checks: Check[] = [];
  const warnings: string[] = [];
  const logDir = path.join(settings.workDir, 'jobs');
  fs.mkdirSync(logDir, { recursive: true });

  const wantsPostgres = cases.some((c) => c.database === 'postgres');
  const server = wantsPostgres ? await probePostgres(settings.postgresUrl) : undefined;
  const shownUrl = redactUrl(settings.postgresUrl);
  let runnable = cases;
  const postgresNote: string[] = [];
  if (server !== undefined && 'error' in server) {
    postgresNote.push(
      `PostgreSQL at ${shownUrl} did not answer (${server.error}): every PostgreSQL job figure is skipped, ` +
        'graphile-worker included.',
    );
    process.stderr.write(
      `PostgreSQL did not answer (${server.error}): skipping the PostgreSQL job figures\n`,
    );
    runnable = cases.filter((c) => c.database !== 'postgres');
  }
  const skipped: Check[] = cases
    .filter((c) => !runnable.includes(c) && c.goals !== undefined)
    .map((c) => ({
      subject: c.name,
      goal: '',
      actual: 'not measured: PostgreSQL did not answer',
      met: false,
      skipped: true,
    }));

  const context: Context = { settings, database: undefined, logDir, files: 0 };
  const throughput = new Map<string, ThroughputResult[]>();
  const latency = new Map<string, LatencyResult>();
  try {
    if (runnable.some((c) => c.database === 'postgres')) {
      context.database = await createBenchDatabase(settings.postgresUrl);
      process.stderr.write(`created database ${context.database.name} for the job benchmarks\n`);
    }
    const throughputCases = runnable.filter((c) => c.measure === 'throughput');
    // Rounds take turns, like the load scenarios', so a neighbour's burst falls on several cases.
    for (let round = 1; round <= settings.rounds; round += 1) {
      for (const c of throughputCases) {
        progress(`round ${round}/${settings.rounds}: ${c.name}`);
        const result =
          c.database === 'sqlite'
            ? await throughputOnSqlite(context, c)
            : await throughputOnPostgres(context, c);
        throughput.set(c.name, [...(throughput.get(c.name) ?? []), result]);
      }
    }
    for (const c of runnable.filter((entry) => entry.measure === 'latency')) {
      progress(`${c.name}: ${settings.ratePerSecond} jobs/s for ${settings.latencySeconds} s`);
      latency.set(
        c.name,
        c.database === 'sqlite' ? await latencyOnSqlite(context, c) : await latencyOnPostgres(context, c),
      );
    }
  } finally {
    await context.database?.drop();
  }

  const medians = new Map([...throughput].map(([name, results]) => [name, medianRound(results)]));
  const throughputResults: ThroughputResult[] = [];
  const latencyResults: LatencyResult[] = [];
  for (const c of runnable) {
    if (c.measure === 'throughput') {
      const result = medians.get(c.name);
      if (result === undefined) continue;
      const anchor = c.anchor === undefined ? undefined : medians.get(c.anchor);
      if (anchor !== undefined) result.ratio = result.drainPerSecond / anchor.drainPerSecond;
      throughputResults.push(result);
      checks.push(...throughputChecks(c, result, anchor));
      if (result.runs !== settings.jobs || result.ranTwice > 0) {
        warnings.push(
          `warning: ${c.name}: ${result.runs} runs for ${settings.jobs} jobs (${result.ranTwice} ran more than once)`,
        );
      }
    } else {
      const result = latency.get(c.name);
      if (result === undefined) continue;
      latencyResults.push(result);
      checks.push(...latencyChecks(c, result));
      if (result.missing > 0)
        warnings.push(`warning: ${c.name}: ${result.missing} timed jobs have no latency`);
    }
  }

  output.push('Job queue: no-op jobs, one job kind');
  if (server !== undefined && !('error' in server)) {
    const s = server.settings;
    output.push(
      `PostgreSQL ${server.version} at ${shownUrl} (autovacuum ${s.autovacuum}, synchronous_commit ` +
        `${s.synchronous_commit}, fsync ${s.fsync}); a fresh database for the run and a fresh schema per ` +
        'measurement, dropped afterwards',
    );
  }
  output.push(...postgresNote);
  output.push(
    `concurrency ${settings.concurrency} per worker process for both queues; graphile-worker with ` +
      `${JSON.stringify(graphileWorkerOptions(settings.concurrency))} and NO_LOG_SUCCESS=1; worker processes run ` +
      `node ${[...settings.nodeOptions, '--import tsx'].join(' ')}`,
  );
  if (throughputResults.length > 0) {
    output.push(
      `\nThroughput: ${count(settings.jobs)} jobs enqueued ${settings.batch} to a statement with no worker running, ` +
        `then drained; drain = first run's start to last run's start, ${settings.rounds === 1 ? 'one round' : `median of ${settings.rounds} rounds`}\n`,
    );
    output.push(throughputRows(throughputResults));
  }
  if (latencyResults.length > 0) {
    output.push(
      `\nStart latency: one job per transaction at ${settings.ratePerSecond} jobs/s for ${settings.latencySeconds} s ` +
        `after ${settings.latencyWarmupSeconds} s untimed; commit (the enqueuing transaction resolved) to the handler's start\n`,
    );
    output.push(latencyRows(latencyResults));
  }
  return { output, checks: [...checks, ...skipped], warnings };
}
