import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/types.js';
import { JobQueue } from '../src/jobs/queue.js';
import type { JobHandler } from '../src/jobs/worker.js';
import { systemClock } from '../src/lib/clock.js';
import {
  deferred,
  jobsOf,
  openJobsDatabase,
  testWorker,
  waitFor,
  type JobsDatabase,
} from './support/jobs-fixture.js';

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

const requests = (kind: string, n: number) => Array.from({ length: n }, (_, i) => ({ kind, payload: { i } }));

describe('prefetch: jobs claimed beyond the free slots and held', () => {
  it('claims up to concurrency + prefetch at once, holds the rest, and never runs more than the concurrency', async () => {
    let running = 0;
    let most = 0;
    const ran: number[] = [];
    const handler: JobHandler<{ i: number }> = {
      kind: 'test.prefetched',
      concurrency: 2,
      prefetch: 6,
      async handle(payload) {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        ran.push(payload.i);
        running -= 1;
      },
    };
    await queue.enqueueMany(db, requests('test.prefetched', 20));
    const { worker } = testWorker({
      db,
      queue,
      clock: systemClock,
      handlers: [handler],
    });
    await worker.start();
    try {
      // The first claim takes 8: 2 start, 6 are held under the same lease.
      await waitFor('the first claim', async () => {
        const leased = (await jobsOf(db, 'test.prefetched')).filter((job) => job.locked_by !== null);
        return leased.length >= 8 || ran.length > 0;
      });
      await waitFor(
        'every job to run',
        async () => ran.length === 20 && (await jobsOf(db, 'test.prefetched')).length === 0,
      );
    } finally {
      await worker.stop(1_000);
    }
    expect(most).toBe(2);
    expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('gives held jobs back at shutdown, due at once and with no attempt counted', async () => {
    const gate = deferred();
    const started = deferred();
    const handler: JobHandler<never> = {
      kind: 'test.held-back',
      concurrency: 1,
      prefetch: 4,
      async handle() {
        started.resolve();
        await gate.promise;
      },
    };
    await queue.enqueueMany(db, requests('test.held-back', 5));
    const { worker } = testWorker({ db, queue, clock: systemClock, handlers: [handler] });
    await worker.start();
    await started.promise;
    const before = Date.now();
    const stopping = worker.stop(50);
    await new Promise((resolve) => setTimeout(resolve, 100));
    gate.resolve();
    await stopping;
    const rows = await jobsOf(db, 'test.held-back');
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      expect(row).toMatchObject({ locked_by: null, attempts: 0, state: 'queued' });
      expect(row.run_at).toBeGreaterThanOrEqual(before);
      expect(row.run_at).toBeLessThanOrEqual(Date.now());
    }
  });

  it('gives a held job back unrun when half its lease is gone before a slot frees, then runs it afresh', async () => {
    const gate = deferred();
    const runs: { i: number; leaseLeft: number }[] = [];
    const handler: JobHandler<{ i: number }> = {
      kind: 'test.stale-held',
      concurrency: 1,
      prefetch: 1,
      leaseMs: 400,
      async handle(payload, run) {
        const row = (await jobsOf(db, 'test.stale-held')).find((job) => job.id === run.id);
        runs.push({ i: payload.i, leaseLeft: (row?.run_at ?? 0) - Date.now() });
        // The first run holds the only slot; the other job is held meanwhile (a batch has no set order).
        if (runs.length === 1) await gate.promise;
      },
    };
    const now = Date.now();
    await queue.enqueue(db, 'test.stale-held', { i: 0 }, { runAt: now - 10 });
    await queue.enqueue(db, 'test.stale-held', { i: 1 }, { runAt: now - 5 });
    const { worker } = testWorker({
      db,
      queue,
      clock: systemClock,
      handlers: [handler],
    });
    await worker.start();
    try {
      await waitFor('the first run', () => runs.length === 1);
      // The second job is held; once more than half of its 400 ms lease has passed it may not start.
      await new Promise((resolve) => setTimeout(resolve, 250));
      gate.resolve();
      await waitFor('the second run', () => runs.length === 2);
    } finally {
      await worker.stop(1_000);
    }
    expect(runs.map((run) => run.i).sort()).toEqual([0, 1]);
    // Claimed again after it was given back: a fresh lease, not the half-spent one it was held under.
    expect(runs[1]!.leaseLeft).toBeGreaterThan(200);
  });
});
