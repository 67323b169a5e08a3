import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../src/jobs/queue.js';
import { PERIODIC_KEY, type JobHandler, type Worker } from '../src/jobs/worker.js';
import { systemClock } from '../src/lib/clock.js';
import {
  dialect,
  jobsOf,
  killWorkerProcesses,
  openJobsDatabase,
  startWorkerProcess,
  testWorker,
  waitFor,
  type JobsDatabase,
  type WorkerProcess,
} from './support/jobs-fixture.js';
import { listRuns, recordRun, type TestRun } from './support/jobs-tables.js';

const TICK_MS = 300;

let jobs: JobsDatabase;
beforeAll(async () => {
  jobs = await openJobsDatabase();
});
afterAll(async () => {
  await killWorkerProcesses();
  await jobs.close();
});

function countBy<T>(items: readonly T[], key: (item: T) => string | number): Map<string | number, number> {
  const counts = new Map<string | number, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/** Runs of the periodic kind per tick of its interval: each tick at most once, and (nearly) none left out. */
function expectOneRunPerTick(runs: readonly TestRun[], windowStart: number, windowEnd: number): void {
  const perTick = countBy(runs, (run) => Math.floor(run.at / TICK_MS));
  expect([...perTick.entries()].filter(([, count]) => count > 1)).toEqual([]);
  // Ticks wholly inside the window. A run that comes late (a loaded machine, the poll) moves on to the
  // next tick and leaves its own empty, which is allowed for some; a tick that runs twice never is.
  const firstTick = Math.ceil(windowStart / TICK_MS);
  const lastTick = Math.floor(windowEnd / TICK_MS) - 1;
  const ticks = lastTick - firstTick + 1;
  let missing = 0;
  for (let tick = firstTick; tick <= lastTick; tick += 1) if (!perTick.has(tick)) missing += 1;
  expect(ticks).toBeGreaterThanOrEqual(4);
  expect(missing).toBeLessThanOrEqual(Math.floor(ticks / 2));
}

// Two processes sharing one queue need PostgreSQL; SQLite serves one process per database.
if (dialect === 'postgres')
  describe('two worker processes', () => {
    let processes: WorkerProcess[] = [];
    let windowStart = 0;
    beforeAll(async () => {
      const settings = { pollMs: 25, leaseMs: 30_000, concurrency: 8, tickMs: TICK_MS };
      processes = await Promise.all([startWorkerProcess(jobs, settings), startWorkerProcess(jobs, settings)]);
      windowStart = Date.now();
    });

    it('run 1,000 jobs between them, each exactly once', async () => {
      const { db } = jobs;
      const queue = new JobQueue(db, systemClock);
      await queue.enqueueMany(
        db,
        Array.from({ length: 1_000 }, (_, i) => ({ kind: 'test.record', payload: { i } })),
      );
      await waitFor(
        'every job to run and leave the table',
        async () =>
          (await listRuns(db, 'test.record')).length >= 1_000 &&
          (await jobsOf(db, 'test.record')).length === 0,
        15_000,
      );

      const runs = await listRuns(db, 'test.record');
      expect(runs).toHaveLength(1_000);
      const perJob = countBy(runs, (run) => run.job_id);
      expect(perJob.size).toBe(1_000);
      expect([...perJob.values()].every((count) => count === 1)).toBe(true);
      const perWorker = countBy(runs, (run) => run.worker);
      expect([...perWorker.keys()].sort()).toEqual(processes.map((child) => child.id).sort());
      expect(runs.every((run) => run.attempt === 1)).toBe(true);
    });

    it('run a periodic task once per tick, whichever takes it', async () => {
      const { db } = jobs;
      const remaining = windowStart + 6 * TICK_MS - Date.now();
      if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, remaining));
      const windowEnd = Date.now();
      await Promise.all(processes.map((child) => child.stop()));

      const runs = (await listRuns(db, 'test.tick')).filter((run) => run.at >= windowStart);
      expectOneRunPerTick(runs, windowStart, windowEnd);
      const [task] = await jobsOf(db, 'test.tick');
      expect(task).toMatchObject({ key: PERIODIC_KEY, state: 'queued', attempts: 0, locked_by: null });
      expect(task!.run_at % TICK_MS).toBe(0);
      expect(await jobsOf(db, 'test.tick')).toHaveLength(1);
    });
  });

if (dialect === 'sqlite')
  describe('two workers in one process', () => {
    it('run a periodic task once per tick, whichever takes it', async () => {
      const workers: Worker[] = [];
      const handler = (db: JobsDatabase['db'], name: string): JobHandler<never> => ({
        kind: 'test.tick',
        everyMs: TICK_MS,
        async handle(_payload, run) {
          await recordRun(db, {
            kind: 'test.tick',
            job_id: run.id,
            worker: name,
            attempt: run.attempt,
            at: Date.now(),
          });
        },
      });
      for (const name of ['one', 'two']) {
        // Each worker on a connection of its own, as two processes would be.
        const db = jobs.connect();
        const queue = new JobQueue(db, systemClock);
        const { worker } = testWorker({
          db,
          queue,
          clock: systemClock,
          pollMs: 25,
          handlers: [handler(db, name)],
        });
        workers.push(worker);
      }
      await Promise.all(workers.map((worker) => worker.start()));
      const windowStart = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 6 * TICK_MS));
      const windowEnd = Date.now();
      await Promise.all(workers.map((worker) => worker.stop(1_000)));

      const runs = (await listRuns(jobs.db, 'test.tick')).filter((run) => run.at >= windowStart);
      expectOneRunPerTick(runs, windowStart, windowEnd);
      expect(await jobsOf(jobs.db, 'test.tick')).toHaveLength(1);
    });
  });
