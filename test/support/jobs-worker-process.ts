/**
 * A job worker in a process of its own, for the tests that kill one or run several: it opens the test
 * database as the service does, runs a Worker with the test kinds below, and prints `{"ready": <worker id>}`
 * once it claims. Settings come as JSON in JOBS_WORKER (see WorkerProcessSettings).
 *
 *   test.slow    records its start, then waits `slowMs` (a run to kill in the middle)
 *   test.record  records each run (concurrency `concurrency`)
 *   test.tick    periodic every `tickMs` when set; records each run
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabaseTarget } from '../../src/config.js';
import { connectDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { Worker, type JobHandler, type JobRun } from '../../src/jobs/worker.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/observability/logger.js';
import { recordRun } from './jobs-tables.js';

export interface WorkerProcessSettings {
  target: DatabaseTarget;
  schema?: string;
  pollMs: number;
  leaseMs: number;
  concurrency?: number;
  slowMs?: number;
  tickMs?: number;
}

const settings = JSON.parse(process.env.JOBS_WORKER ?? '{}') as WorkerProcessSettings;
const db = connectDatabase(settings.target, settings.schema === undefined ? {} : { schema: settings.schema });
await migrateToLatest(db);
const queue = new JobQueue(db, systemClock);

let workerId = '';
const record = (kind: string, run: JobRun) =>
  recordRun(db, { kind, job_id: run.id, worker: workerId, attempt: run.attempt, at: Date.now() });

const handlers: JobHandler<never>[] = [
  {
    kind: 'test.slow',
    async handle(_payload, run) {
      await record('test.slow', run);
      await sleep(settings.slowMs ?? 600_000);
    },
  },
  {
    kind: 'test.record',
    concurrency: settings.concurrency ?? 1,
    async handle(_payload, run) {
      await record('test.record', run);
    },
  },
];
if (settings.tickMs !== undefined) {
  handlers.push({
    kind: 'test.tick',
    everyMs: settings.tickMs,
    async handle(_payload, run) {
      await record('test.tick', run);
    },
  });
}

const worker = new Worker({
  db,
  queue,
  clock: systemClock,
  logger: createLogger('warn', process.stderr),
  handlers,
  pollMs: settings.pollMs,
  leaseMs: settings.leaseMs,
});
workerId = worker.id;
await worker.start();
process.stdout.write(`${JSON.stringify({ ready: worker.id })}\n`);

process.once('SIGTERM', () => {
  worker
    .stop(1_000)
    .then(() => db.destroy())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`${String(error)}\n`);
        process.exit(1);
      },
    );
});
