import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/types.js';
import { JobQueue } from '../src/jobs/queue.js';
import type { JobHandler, JobRun } from '../src/jobs/worker.js';
import { systemClock } from '../src/lib/clock.js';
import {
  deferred,
  jobById,
  jobsOf,
  onlyJob,
  openJobsDatabase,
  testWorker,
  waitFor,
  type Deferred,
  type JobsDatabase,
} from './support/jobs-fixture.js';

const LONG_LEASE_MS = 60_000;

let jobs: JobsDatabase;
let db: Db;
let queue: JobQueue;
beforeAll(async () => {
  jobs = await openJobsDatabase();
  db = jobs.db;
  queue = new JobQueue(db, systemClock);
});
afterAll(async () => {
  await jobs.close();
});

interface Started {
  run: JobRun;
  at: number;
}

/** A handler that runs until the test opens its gate, whatever its signal says (a slow outside call). */
function heldHandler(kind: string, started: Deferred<Started>, gate: Promise<void>): JobHandler<never> {
  return {
    kind,
    async handle(_payload, run) {
      started.resolve({ run, at: Date.now() });
      await gate;
    },
  };
}

describe('stopping a worker', () => {
  it('gives the lease of a run past the deadline back, and another worker takes the job at once', async () => {
    const firstStarted = deferred<Started>();
    const firstGate = deferred();
    const { worker: stopping, logs } = testWorker({
      db,
      queue,
      clock: systemClock,
      leaseMs: LONG_LEASE_MS,
      handlers: [heldHandler('test.held', firstStarted, firstGate.promise)],
    });
    const secondStarted = deferred<Started>();
    const secondGate = deferred();
    const { worker: other } = testWorker({
      db,
      queue,
      clock: systemClock,
      pollMs: 100,
      leaseMs: LONG_LEASE_MS,
      handlers: [heldHandler('test.held', secondStarted, secondGate.promise)],
    });
    await stopping.start();
    await queue.enqueue(db, 'test.held', null);
    const first = await firstStarted.promise;
    await other.start();
    try {
      const leased = await onlyJob(db, 'test.held');
      expect(leased).toMatchObject({ attempts: 1, locked_by: stopping.id });
      expect(leased.run_at).toBeGreaterThanOrEqual(first.at + LONG_LEASE_MS - 1_000);

      const stopAt = Date.now();
      await stopping.stop(200);
      const stoppedAt = Date.now();
      expect(stoppedAt - stopAt).toBeGreaterThanOrEqual(190);
      expect(first.run.signal.aborted).toBe(true);
      expect(logs.join('')).toContain('job leases given back');

      const second = await secondStarted.promise;
      expect(second.run.id).toBe(first.run.id);
      expect(second.run.attempt).toBe(1);
      expect(second.at - stoppedAt).toBeLessThan(1_000);
      expect(await onlyJob(db, 'test.held')).toMatchObject({ attempts: 1, locked_by: other.id });
      secondGate.resolve();
      await waitFor('the job to finish', async () => (await jobsOf(db, 'test.held')).length === 0);
    } finally {
      firstGate.resolve();
      secondGate.resolve();
      await other.stop(1_000);
    }
  });

  it('records the release exactly: run_at now, no worker, the attempt not counted', async () => {
    const started = deferred<Started>();
    const gate = deferred();
    const { worker } = testWorker({
      db,
      queue,
      clock: systemClock,
      leaseMs: LONG_LEASE_MS,
      handlers: [heldHandler('test.released', started, gate.promise)],
    });
    await worker.start();
    await queue.enqueue(db, 'test.released', null, { maxAttempts: 3 });
    const { run } = await started.promise;
    const stopAt = Date.now();
    await worker.stop(100);
    const stoppedAt = Date.now();
    const job = (await jobById(db, run.id))!;
    expect(job).toMatchObject({ state: 'queued', attempts: 0, locked_by: null, last_error: null });
    expect(job.run_at).toBeGreaterThanOrEqual(stopAt);
    expect(job.run_at).toBeLessThanOrEqual(stoppedAt);
    gate.resolve();
  });

  it('waits for a run that ends before the deadline, and removes its job', async () => {
    const started = deferred<Started>();
    const gate = deferred();
    const { worker, logs } = testWorker({
      db,
      queue,
      clock: systemClock,
      handlers: [heldHandler('test.finishing', started, gate.promise)],
    });
    await worker.start();
    await queue.enqueue(db, 'test.finishing', null);
    const { run } = await started.promise;
    setTimeout(() => gate.resolve(), 100);
    const stopAt = Date.now();
    await worker.stop(5_000);
    const took = Date.now() - stopAt;
    expect(took).toBeGreaterThanOrEqual(90);
    expect(took).toBeLessThan(2_000);
    expect(run.signal.aborted).toBe(false);
    expect(await jobById(db, run.id)).toBeUndefined();
    expect(logs.join('')).not.toContain('job leases given back');
  });

  it('claims nothing once stopped', async () => {
    let runs = 0;
    const { worker } = testWorker({
      db,
      queue,
      clock: systemClock,
      pollMs: 20,
      handlers: [
        {
          kind: 'test.after-stop',
          async handle() {
            runs += 1;
          },
        },
      ],
    });
    await worker.start();
    await worker.stop(1_000);
    await queue.enqueue(db, 'test.after-stop', null);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(runs).toBe(0);
    expect(await jobsOf(db, 'test.after-stop')).toHaveLength(1);
  });

  it('keeps the new lease when the run it took over from ends late', async () => {
    const staleStarted = deferred<Started>();
    const staleGate = deferred();
    const stale: JobHandler<never> = {
      kind: 'test.taken-over',
      async handle(_payload, run) {
        staleStarted.resolve({ run, at: Date.now() });
        await staleGate.promise;
        throw new Error('the interrupted run failed late');
      },
    };
    const { worker: stopping, logs } = testWorker({
      db,
      queue,
      clock: systemClock,
      leaseMs: LONG_LEASE_MS,
      handlers: [stale],
    });
    await stopping.start();
    await queue.enqueue(db, 'test.taken-over', null);
    const { run } = await staleStarted.promise;
    await stopping.stop(100);

    const takerStarted = deferred<Started>();
    const takerGate = deferred();
    const { worker: taker } = testWorker({
      db,
      queue,
      clock: systemClock,
      leaseMs: LONG_LEASE_MS,
      handlers: [heldHandler('test.taken-over', takerStarted, takerGate.promise)],
    });
    await taker.start();
    try {
      await takerStarted.promise;
      const leased = (await jobById(db, run.id))!;
      expect(leased).toMatchObject({ locked_by: taker.id, attempts: 1 });

      // The first run, given up on at shutdown, now fails: its outcome must not touch the new run's lease.
      staleGate.resolve();
      await waitFor('the late failure to be handled', () => logs.join('').includes('job failed; will retry'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await jobById(db, run.id)).toMatchObject({
        locked_by: taker.id,
        attempts: 1,
        run_at: leased.run_at,
        last_error: null,
      });
    } finally {
      staleGate.resolve();
      takerGate.resolve();
      await taker.stop(1_000);
    }
  });
});
