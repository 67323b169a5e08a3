import { spawn, type ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { DatabaseTarget } from '../../src/config.js';
import { connectDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Db, JobsTable } from '../../src/db/types.js';
import type { JobMetrics } from '../../src/jobs/metrics.js';
import type { JobQueue } from '../../src/jobs/queue.js';
import { Worker, type JobHandler } from '../../src/jobs/worker.js';
import type { Clock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/observability/logger.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { createTestRunsTable } from './jobs-tables.js';
import type { WorkerProcessSettings } from './jobs-worker-process.js';

export { dialect } from './database.js';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER_SCRIPT = fileURLToPath(new URL('./jobs-worker-process.ts', import.meta.url));

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(public time: number) {}
  now(): number {
    return this.time;
  }
  set(time: number): void {
    this.time = time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Polls `read` until it returns something other than undefined or false; fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  read: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A logger whose lines the test can read. */
export function capturingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

export interface JobsDatabase {
  database: TestDatabase;
  target: DatabaseTarget;
  /** The test's own connection, migrated, with the test_runs table. */
  db: Db;
  /** Another connection to the same database (closed with the rest). */
  connect(): Db;
  close(): Promise<void>;
}

/** A file's database: opened (openJobsDatabase) before its tests, `opened` given it, closed after them. */
export function jobsDatabaseOfFile(opened: (db: Db) => void): void {
  let jobs: JobsDatabase | undefined;
  beforeAll(async () => {
    jobs = await openJobsDatabase();
    opened(jobs.db);
  });
  afterAll(async () => {
    await jobs?.close();
  });
}

/** A fresh database of the dialect under test, migrated, with the test_runs table. */
export async function openJobsDatabase(): Promise<JobsDatabase> {
  const database = await createTestDatabase();
  const target: DatabaseTarget = database.url.startsWith('sqlite:')
    ? { kind: 'sqlite', file: database.url.slice('sqlite:'.length) }
    : { kind: 'postgres', url: database.url };
  const connections: Db[] = [];
  const connect = () => {
    const db = connectDatabase(target, database.schema === undefined ? {} : { schema: database.schema });
    connections.push(db);
    return db;
  };
  const db = connect();
  await migrateToLatest(db);
  await createTestRunsTable(db);
  return {
    database,
    target,
    db,
    connect,
    async close() {
      for (const connection of connections) await connection.destroy();
      await database.drop();
    },
  };
}

export interface TestWorkerOptions {
  db: Db;
  queue: JobQueue;
  clock: Clock;
  handlers: readonly JobHandler<never>[];
  pollMs?: number;
  leaseMs?: number;
  metrics?: JobMetrics;
}

/** A Worker as the service builds one, with a capturing logger. */
export function testWorker(options: TestWorkerOptions) {
  const { logger, lines } = capturingLogger();
  const worker = new Worker({
    db: options.db,
    queue: options.queue,
    clock: options.clock,
    logger,
    handlers: options.handlers,
    pollMs: options.pollMs ?? 60_000,
    leaseMs: options.leaseMs ?? 60_000,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  return { worker, logs: lines };
}

export async function jobsOf(db: Db, kind: string): Promise<JobsTable[]> {
  const rows = await db
    .selectFrom('jobs')
    .selectAll()
    .where('kind', '=', kind)
    .orderBy('created_at')
    .execute();
  return rows.map(normalizeJob);
}

export async function jobById(db: Db, id: string): Promise<JobsTable | undefined> {
  const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : normalizeJob(row);
}

/** The one job of a kind (fails when there is not exactly one). */
export async function onlyJob(db: Db, kind: string): Promise<JobsTable> {
  const rows = await jobsOf(db, kind);
  if (rows.length !== 1) throw new Error(`expected one ${kind} job, found ${rows.length}`);
  return rows[0]!;
}

function normalizeJob(row: JobsTable): JobsTable {
  return {
    ...row,
    run_at: Number(row.run_at),
    attempts: Number(row.attempts),
    max_attempts: Number(row.max_attempts),
    created_at: Number(row.created_at),
  };
}

export interface WorkerProcess {
  /** The Worker id the process reported (what it writes as `worker` in test_runs). */
  id: string;
  child: ChildProcess;
  stderr(): string;
  /** SIGKILL: the process ends at once, in the middle of whatever it runs. */
  kill(): Promise<void>;
  /** SIGTERM: the worker stops as `serve` does. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Starts test/support/jobs-worker-process.ts on the test database; resolves once its worker runs. */
export async function startWorkerProcess(
  jobs: JobsDatabase,
  settings: Omit<WorkerProcessSettings, 'target' | 'schema'>,
): Promise<WorkerProcess> {
  const full: WorkerProcessSettings = {
    ...settings,
    target: jobs.target,
    ...(jobs.database.schema === undefined ? {} : { schema: jobs.database.schema }),
  };
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_SCRIPT], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, JOBS_WORKER: JSON.stringify(full) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let stdout = '';
  const id = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker process did not start: ${stderr}`)), 30_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /\{"ready":"([^"]+)"\}/.exec(stdout);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`worker process exited before it was ready (${child.exitCode}): ${stderr}`));
    });
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { id, child, stderr: () => stderr, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}

/** Kills the worker processes a failed test left behind. */
export async function killWorkerProcesses(): Promise<void> {
  const left = [...running];
  await Promise.all(
    left.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
