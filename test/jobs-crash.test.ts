import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseNow } from '../src/db/now.js';
import { claimDue, countJobs, oldestDueAge } from '../src/jobs/repo.js';
import { JobQueue } from '../src/jobs/queue.js';
import { systemClock } from '../src/lib/clock.js';
import {
  dialect,
  jobById,
  jobsOf,
  killWorkerProcesses,
  ManualClock,
  onlyJob,
  openJobsDatabase,
  startWorkerProcess,
  testWorker,
  waitFor,
  type JobsDatabase,
} from './support/jobs-fixture.js';
import { listRuns, recordRun } from './support/jobs-tables.js';

const LEASE_MS = 500;

let jobs: JobsDatabase;
beforeAll(async () => {
  jobs = await openJobsDatabase();
});
afterEach(async () => {
  await killWorkerProcesses();
});
afterAll(async () => {
  await jobs.close();
});

describe('a worker process killed in the middle of a job', () => {
  it('leaves the job leased until the lease passes; then another worker runs it again', async () => {
    const { db } = jobs;
    const child = await startWorkerProcess(jobs, { pollMs: 50, leaseMs: LEASE_MS });
    const queue = new JobQueue(db, systemClock);
    await queue.enqueue(db, 'test.slow', { n: 1 });
    const { id } = await onlyJob(db, 'test.slow');

    const [first] = await waitFor('the child to start the job', async () => {
      const runs = await listRuns(db, 'test.slow');
      return runs.length > 0 && runs;
    });
    expect(first).toMatchObject({ job_id: id, worker: child.id, attempt: 1 });
    const leased = (await jobById(db, id))!;
    expect(leased).toMatchObject({ state: 'queued', attempts: 1, locked_by: child.id });
    expect(leased.run_at).toBeGreaterThan(first!.at);
    expect(leased.run_at).toBeLessThanOrEqual(first!.at + LEASE_MS);

    await child.kill();
    expect(child.child.signalCode).toBe('SIGKILL');
    expect(await jobById(db, id)).toMatchObject({ attempts: 1, locked_by: child.id, run_at: leased.run_at });

    // Another worker, started at once: it must wait for the lease, then take the job.
    const { worker } = testWorker({
      db,
      queue,
      clock: systemClock,
      pollMs: 25,
      leaseMs: 30_000,
      handlers: [
        {
          kind: 'test.slow',
          async handle(_payload, run) {
            await recordRun(db, {
              kind: 'test.slow',
              job_id: run.id,
              worker: 'replacement',
              attempt: run.attempt,
              at: Date.now(),
            });
          },
        },
      ],
    });
    await worker.start();
    try {
      await waitFor('the job to run again and finish', async () => (await jobById(db, id)) === undefined);
    } finally {
      await worker.stop(1_000);
    }
    const runs = await listRuns(db, 'test.slow');
    expect(runs.map(({ worker: by, attempt }) => ({ by, attempt }))).toEqual([
      { by: child.id, attempt: 1 },
      { by: 'replacement', attempt: 2 },
    ]);
    expect(runs[1]!.at).toBeGreaterThanOrEqual(leased.run_at);
    expect(runs[1]!.at - leased.run_at).toBeLessThan(2_000);
  });

  // Only PostgreSQL runs the API and workers in several processes; SQLite has one process per database.
  if (dialect === 'postgres')
    describe('with a second worker process', () => {
      it('runs the job again in the other process once the lease has passed', async () => {
        const { db } = jobs;
        const killed = await startWorkerProcess(jobs, { pollMs: 50, leaseMs: LEASE_MS, slowMs: 600_000 });
        const queue = new JobQueue(db, systemClock);
        await queue.enqueue(db, 'test.slow', { n: 2 });
        const { id } = await onlyJob(db, 'test.slow');
        await waitFor('the first process to start the job', async () =>
          (await listRuns(db, 'test.slow')).some((run) => run.job_id === id),
        );
        const lease = (await jobById(db, id))!.run_at;
        // The survivor finishes its runs at once; it starts now, while the first process still holds the lease.
        const survivor = await startWorkerProcess(jobs, { pollMs: 50, leaseMs: LEASE_MS, slowMs: 0 });
        await killed.kill();
        await waitFor('the survivor to run the job', async () => (await jobById(db, id)) === undefined);
        await survivor.stop();
        const runs = (await listRuns(db, 'test.slow')).filter((run) => run.job_id === id);
        expect(runs.map(({ worker, attempt }) => ({ worker, attempt }))).toEqual([
          { worker: killed.id, attempt: 1 },
          { worker: survivor.id, attempt: 2 },
        ]);
        expect(runs[1]!.at).toBeGreaterThanOrEqual(lease);
      });
    });

  it('counts a dead worker job as due, not running, once its lease has passed', async () => {
    const { db } = jobs;
    const clock = new ManualClock(Date.UTC(2030, 0, 1));
    const queue = new JobQueue(db, clock);
    await queue.enqueue(db, 'test.orphan', null);
    // A worker leases the job and dies without a word: no process needed to leave this row behind.
    const [claimed] = await claimDue(db, {
      kind: 'test.orphan',
      now: databaseNow(db, clock),
      leaseMs: LEASE_MS,
      limit: 1,
      workerId: 'worker-gone',
    });
    expect(claimed).toBeDefined();
    const state = async () =>
      (await countJobs(db, clock.now())).find((row) => row.kind === 'test.orphan')?.state;
    expect(await state()).toBe('running');

    clock.advance(LEASE_MS + 1_500);
    // Any worker would take it now: it waits for one, and the queue's numbers must say so.
    expect(await state()).toBe('due');
    expect(await oldestDueAge(db, clock.now())).toBe(1_500);
    expect(await jobsOf(db, 'test.orphan')).toHaveLength(1);
  });
});
