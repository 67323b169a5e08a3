import { describe, expect, it } from 'vitest';
import { databaseNow } from '../src/db/now.js';
import type { Db } from '../src/db/types.js';
import { backoffDelay, DEFAULT_BACKOFF, JITTER, type BackoffPolicy } from '../src/jobs/backoff.js';
import { PermanentJobFailure, RetryJobAt } from '../src/jobs/outcomes.js';
import { JobQueue } from '../src/jobs/queue.js';
import { kindsWithDueJobs } from '../src/jobs/repo.js';
import { Worker, type JobHandler, type JobRun } from '../src/jobs/worker.js';
import { systemClock } from '../src/lib/clock.js';
import {
  capturingLogger,
  deferred,
  jobsOf,
  type Deferred,
  ManualClock,
  onlyJob,
  jobsDatabaseOfFile,
  testWorker,
  waitFor,
} from './support/jobs-fixture.js';

const T0 = Date.UTC(2030, 0, 1);

let db: Db;
jobsDatabaseOfFile((opened) => (db = opened));

/** A worker with these handlers, on a clock set to T0 that the test moves. */
function workerAtT0(...handlers: JobHandler<never>[]) {
  const clock = new ManualClock(T0);
  const queue = new JobQueue(db, clock);
  return { clock, queue, ...testWorker({ db, queue, clock, handlers }) };
}

/** The bounds of the wait after the `failures`-th failure: the jitter's extremes. */
function bounds(failures: number, policy: BackoffPolicy): [number, number] {
  return [backoffDelay(failures, policy, 0), backoffDelay(failures, policy, 0.999_999_999)];
}

describe('handlers per kind', () => {
  it('never runs more than the concurrency of a kind at once, and each kind has its own', async () => {
    const queue = new JobQueue(db, systemClock);
    const gate = deferred();
    let running = 0;
    let most = 0;
    const ran: string[] = [];
    const { worker } = testWorker({
      db,
      queue,
      clock: systemClock,
      pollMs: 50,
      handlers: [
        {
          kind: 'test.wide',
          concurrency: 3,
          async handle(_payload, run: JobRun) {
            running += 1;
            most = Math.max(most, running);
            await gate.promise;
            ran.push(run.id);
            running -= 1;
          },
        },
        {
          kind: 'test.narrow',
          async handle(_payload, run: JobRun) {
            ran.push(run.id);
          },
        },
      ],
    });
    await worker.start();
    try {
      await queue.enqueueMany(
        db,
        Array.from({ length: 10 }, (_, i) => ({ kind: 'test.wide', payload: { i } })),
      );
      await waitFor('three runs at once', () => running === 3);
      // With every slot of test.wide taken, test.narrow still runs at once.
      await queue.enqueue(db, 'test.narrow', null);
      await waitFor('the other kind to run', async () => (await jobsOf(db, 'test.narrow')).length === 0);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(running).toBe(3);
      const counts = await jobsOf(db, 'test.wide');
      expect(counts.filter((row) => row.locked_by === worker.id)).toHaveLength(3);
      gate.resolve();
      await waitFor('every job to finish and leave the table', async () => {
        return ran.length === 11 && (await jobsOf(db, 'test.wide')).length === 0;
      });
      expect(most).toBe(3);
      expect(new Set(ran).size).toBe(11);
    } finally {
      gate.resolve();
      await worker.stop(1_000);
    }
  });

  it('keeps to the concurrency while slots free up and are claimed again', async () => {
    const queue = new JobQueue(db, systemClock);
    let running = 0;
    let most = 0;
    let done = 0;
    const { worker } = testWorker({
      db,
      queue,
      clock: systemClock,
      pollMs: 50,
      handlers: [
        {
          kind: 'test.churn',
          concurrency: 4,
          async handle(payload: { ms: number }) {
            running += 1;
            most = Math.max(most, running);
            await new Promise((resolve) => setTimeout(resolve, payload.ms));
            running -= 1;
            done += 1;
          },
        },
      ],
    });
    await worker.start();
    try {
      await queue.enqueueMany(
        db,
        Array.from({ length: 60 }, (_, i) => ({ kind: 'test.churn', payload: { ms: (i * 7) % 11 } })),
      );
      await waitFor('every run', async () => done === 60 && (await jobsOf(db, 'test.churn')).length === 0);
      expect(most).toBe(4);
    } finally {
      await worker.stop(1_000);
    }
  });

  it('starts no more runs than its concurrency while a claim is out, whatever finishes or arrives meanwhile', async () => {
    // The racy point: between the free slots counted and the claim's answer. The claim is parked there
    // (after its statement, so the database is free) while the other run ends and more jobs arrive:
    // nothing but the loop may fill the slots.
    let parkNext = false;
    const parked = deferred();
    const reached = deferred();
    class ParkingWorker extends Worker {
      override async claim(handler: JobHandler<never>, limit: number) {
        const claimed = await super.claim(handler, limit);
        if (parkNext) {
          parkNext = false;
          reached.resolve();
          await parked.promise;
        }
        return claimed;
      }
    }
    const queue = new JobQueue(db, systemClock);
    const gates = new Map<number, Deferred>();
    let running = 0;
    let most = 0;
    const ran: number[] = [];
    const worker = new ParkingWorker({
      db,
      queue,
      clock: systemClock,
      logger: capturingLogger().logger,
      leaseMs: 60_000,
      pollMs: 20,
      handlers: [
        {
          kind: 'test.claim-race',
          concurrency: 2,
          async handle(payload: { n: number }) {
            running += 1;
            most = Math.max(most, running);
            const gate = deferred();
            gates.set(payload.n, gate);
            await gate.promise;
            ran.push(payload.n);
            running -= 1;
          },
        },
      ],
    });
    const enqueue = (from: number, count: number) =>
      queue.enqueueMany(
        db,
        Array.from({ length: count }, (_, k) => ({ kind: 'test.claim-race', payload: { n: from + k } })),
      );
    await worker.start();
    try {
      await enqueue(0, 2);
      await waitFor('two runs', () => running === 2);
      await enqueue(2, 4);
      parkNext = true;
      gates.get(0)!.resolve();
      await reached.promise;
      // The claim is out for the one slot that was free; the other run ends and more jobs come meanwhile.
      gates.get(1)!.resolve();
      await enqueue(6, 4);
      await waitFor('the other run to end', () => ran.length === 2);
      parked.resolve();
      // Each run, in whatever order they are claimed, is let finish only once it has started.
      const released = new Set([0, 1]);
      await waitFor('every run', async () => {
        expect(running).toBeLessThanOrEqual(2);
        for (const [n, gate] of gates) {
          if (released.has(n)) continue;
          released.add(n);
          gate.resolve();
        }
        return ran.length === 10 && (await jobsOf(db, 'test.claim-race')).length === 0;
      });
      expect(most).toBe(2);
    } finally {
      for (const gate of gates.values()) gate.resolve();
      parked.resolve();
      await worker.stop(1_000);
    }
  });

  it('passes the payload and the run (id, key, attempt) to the handler, and removes the job on success', async () => {
    const clock = new ManualClock(T0);
    const queue = new JobQueue(db, clock);
    const seen: { payload: unknown; run: Omit<JobRun, 'signal' | 'readAlong'> }[] = [];
    const { worker } = testWorker({
      db,
      queue,
      clock,
      handlers: [
        {
          kind: 'test.echo',
          async handle(payload: unknown, run: JobRun) {
            seen.push({
              payload,
              run: { id: run.id, key: run.key, attempt: run.attempt, maxAttempts: run.maxAttempts },
            });
          },
        },
      ],
    });
    await queue.enqueue(db, 'test.echo', { deep: { list: [1, 'two', null] } }, { key: 'e1', maxAttempts: 4 });
    const { id } = await onlyJob(db, 'test.echo');
    expect(await worker.runDue()).toBe(1);
    expect(seen).toEqual([
      {
        payload: { deep: { list: [1, 'two', null] } },
        run: { id, key: 'e1', attempt: 1, maxAttempts: 4 },
      },
    ]);
    expect(await jobsOf(db, 'test.echo')).toEqual([]);
  });

  it('refuses two handlers for one kind', () => {
    const queue = new JobQueue(db, systemClock);
    const handler = { kind: 'test.twice', handle: async () => undefined };
    expect(() => testWorker({ db, queue, clock: systemClock, handlers: [handler, handler] })).toThrow(
      /two handlers for job kind test\.twice/,
    );
  });

  it('leaves jobs that are not due, and kinds it has no handler for', async () => {
    const clock = new ManualClock(T0);
    const queue = new JobQueue(db, clock);
    const { worker } = testWorker({
      db,
      queue,
      clock,
      handlers: [{ kind: 'test.future', handle: async () => undefined }],
    });
    await queue.enqueue(db, 'test.future', null, { runAt: T0 + 1 });
    await queue.enqueue(db, 'test.unhandled', null);
    expect(await worker.runDue()).toBe(0);
    expect(await jobsOf(db, 'test.future')).toHaveLength(1);
    expect(await jobsOf(db, 'test.unhandled')).toHaveLength(1);
    clock.advance(1);
    expect(await worker.runDue()).toBe(1);
  });
});

describe('the poll', () => {
  it('wakes only the kinds with a job due, when its time comes, with no enqueue to wake them', async () => {
    const clock = new ManualClock(T0);
    const queue = new JobQueue(db, clock);
    const ran: string[] = [];
    const record = (kind: string): JobHandler<never> => ({
      kind,
      async handle() {
        ran.push(kind);
      },
    });
    const { worker } = testWorker({
      db,
      queue,
      clock,
      pollMs: 20,
      handlers: [record('test.poll-soon'), record('test.poll-later'), record('test.poll-idle')],
    });
    await queue.enqueue(db, 'test.poll-soon', null, { runAt: T0 + 60_000 });
    await queue.enqueue(db, 'test.poll-later', null, { runAt: T0 + 120_000 });
    await worker.start();
    try {
      expect(
        await kindsWithDueJobs(
          db,
          ['test.poll-soon', 'test.poll-later', 'test.poll-idle'],
          databaseNow(db, new ManualClock(T0)),
        ),
      ).toEqual([]);
      clock.set(T0 + 60_000);
      await waitFor('the poll to run the job now due', () => ran.length === 1);
      expect(
        await kindsWithDueJobs(
          db,
          ['test.poll-later', 'test.poll-idle'],
          databaseNow(db, new ManualClock(T0 + 120_000)),
        ),
      ).toEqual(['test.poll-later']);
      clock.set(T0 + 120_000);
      await waitFor('the poll to run the second', () => ran.length === 2);
      expect(ran).toEqual(['test.poll-soon', 'test.poll-later']);
    } finally {
      await worker.stop();
    }
  });
});

describe('failures', () => {
  it('retries with exponential backoff and jitter, then keeps the job as dead with its last error', async () => {
    const clock = new ManualClock(T0);
    const queue = new JobQueue(db, clock);
    const policy: BackoffPolicy = { baseMs: 1_000, maxMs: 3_000 };
    const attempts: number[] = [];
    const { worker, logs } = testWorker({
      db,
      queue,
      clock,
      handlers: [
        {
          kind: 'test.flaky',
          backoff: policy,
          async handle(_payload, run: JobRun) {
            attempts.push(run.attempt);
            throw new Error(`failure ${run.attempt}`);
          },
        },
      ],
    });
    await queue.enqueue(db, 'test.flaky', null, { maxAttempts: 4 });

    for (const attempt of [1, 2, 3]) {
      const before = clock.now();
      expect(await worker.runDue()).toBe(1);
      const job = await onlyJob(db, 'test.flaky');
      const [low, high] = bounds(attempt, policy);
      expect(job).toMatchObject({
        state: 'queued',
        attempts: attempt,
        locked_by: null,
        last_error: `failure ${attempt}`,
      });
      expect(job.run_at - before).toBeGreaterThanOrEqual(low);
      expect(job.run_at - before).toBeLessThanOrEqual(high);
      // Not due a millisecond early.
      clock.set(job.run_at - 1);
      expect(await worker.runDue()).toBe(0);
      clock.set(job.run_at);
    }
    expect(bounds(1, policy)).toEqual([800, 1_200]);
    expect(bounds(2, policy)).toEqual([1_600, 2_400]);
    expect(bounds(3, policy)).toEqual([2_400, 3_600]);

    expect(await worker.runDue()).toBe(1);
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect(await onlyJob(db, 'test.flaky')).toMatchObject({
      state: 'dead',
      attempts: 4,
      locked_by: null,
      last_error: 'failure 4',
    });
    clock.advance(24 * 3_600_000);
    expect(await worker.runDue()).toBe(0);
    expect(logs.join('')).toContain('job failed for good; kept as dead');
  });

  it('uses the default backoff when the handler names none', async () => {
    const { queue, worker } = workerAtT0({
      kind: 'test.default-backoff',
      async handle() {
        throw new Error('down');
      },
    });
    await queue.enqueue(db, 'test.default-backoff', null);
    expect(await worker.runDue()).toBe(1);
    const job = await onlyJob(db, 'test.default-backoff');
    expect(job.run_at - T0).toBeGreaterThanOrEqual(DEFAULT_BACKOFF.baseMs * (1 - JITTER));
    expect(job.run_at - T0).toBeLessThanOrEqual(DEFAULT_BACKOFF.baseMs * (1 + JITTER));
    expect(job).toMatchObject({ attempts: 1, max_attempts: 10, state: 'queued' });
  });

  it('makes the job dead at once on PermanentJobFailure', async () => {
    const { queue, worker } = workerAtT0({
      kind: 'test.permanent',
      async handle() {
        throw new PermanentJobFailure('the resource is gone');
      },
    });
    await queue.enqueue(db, 'test.permanent', null, { maxAttempts: 5 });
    expect(await worker.runDue()).toBe(1);
    expect(await onlyJob(db, 'test.permanent')).toMatchObject({
      state: 'dead',
      attempts: 1,
      locked_by: null,
      last_error: 'the resource is gone',
    });
  });

  it('runs the job again at the exact time of RetryJobAt', async () => {
    const clock = new ManualClock(T0);
    const queue = new JobQueue(db, clock);
    let runs = 0;
    const { worker } = testWorker({
      db,
      queue,
      clock,
      handlers: [
        {
          kind: 'test.retry-at',
          async handle() {
            runs += 1;
            if (runs === 1) throw new RetryJobAt(T0 + 123_457, 'retry after 123 s');
          },
        },
      ],
    });
    await queue.enqueue(db, 'test.retry-at', null);
    expect(await worker.runDue()).toBe(1);
    expect(await onlyJob(db, 'test.retry-at')).toMatchObject({
      state: 'queued',
      run_at: T0 + 123_457,
      attempts: 1,
      last_error: 'retry after 123 s',
    });
    clock.set(T0 + 123_456);
    expect(await worker.runDue()).toBe(0);
    clock.set(T0 + 123_457);
    expect(await worker.runDue()).toBe(1);
    expect(await jobsOf(db, 'test.retry-at')).toEqual([]);
  });

  it('keeps what was thrown as the last error, shortened to 2,000 characters', async () => {
    const { queue, worker } = workerAtT0(
      {
        kind: 'test.long-error',
        async handle() {
          throw new Error('x'.repeat(5_000));
        },
      },
      {
        kind: 'test.string-error',
        async handle() {
          // eslint-disable-next-line @typescript-eslint/only-throw-error
          throw 'a plain string';
        },
      },
    );
    await queue.enqueue(db, 'test.long-error', null, { maxAttempts: 1 });
    await queue.enqueue(db, 'test.string-error', null, { maxAttempts: 1 });
    expect(await worker.runDue()).toBe(2);
    expect((await onlyJob(db, 'test.long-error')).last_error).toBe('x'.repeat(2_000));
    expect(await onlyJob(db, 'test.string-error')).toMatchObject({
      state: 'dead',
      last_error: 'a plain string',
    });
  });
});
