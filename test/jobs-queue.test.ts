import type { KyselyPlugin, Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Db } from '../src/db/types.js';
import { PermanentJobFailure } from '../src/jobs/outcomes.js';
import { inSavepoint, transaction } from '../src/db/transaction.js';
import { listenOn } from '../src/db/listener.js';
import { DEFAULT_MAX_ATTEMPTS, JOBS_CHANNEL, JobQueue } from '../src/jobs/queue.js';
import type { JobHandler, Worker } from '../src/jobs/worker.js';
import { systemClock } from '../src/lib/clock.js';
import {
  capturingLogger,
  deferred,
  dialect,
  jobsOf,
  ManualClock,
  onlyJob,
  jobsDatabaseOfFile,
  testWorker,
  waitFor,
} from './support/jobs-fixture.js';

const T0 = Date.UTC(2030, 0, 1);

let db: Db;
jobsDatabaseOfFile((opened) => (db = opened));

class Rollback extends Error {}

async function rolledBack(work: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
  await expect(
    db.transaction().execute(async (trx) => {
      await work(trx);
      throw new Rollback();
    }),
  ).rejects.toBeInstanceOf(Rollback);
}

describe('enqueue in the caller transaction', () => {
  let worker: Worker;
  let queue: JobQueue;
  const ran: { id: string; at: number }[] = [];
  let onRun = (): void => undefined;

  beforeAll(async () => {
    queue = new JobQueue(db, systemClock);
    const handler: JobHandler<{ n: number }> = {
      kind: 'test.wake',
      async handle(_payload, run) {
        ran.push({ id: run.id, at: Date.now() });
        onRun();
      },
    };
    // The poll is a minute: a job that runs within the test ran because the enqueue woke the worker.
    ({ worker } = testWorker({ db, queue, clock: systemClock, handlers: [handler], pollMs: 60_000 }));
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop(1_000);
  });

  it('leaves no job when the transaction rolls back', async () => {
    await rolledBack((trx) => queue.enqueue(trx, 'test.wake', { n: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await jobsOf(db, 'test.wake')).toEqual([]);
    expect(ran).toEqual([]);
  });

  it('runs the job promptly after the commit, not before it, without waiting for the poll', async () => {
    const started = deferred();
    onRun = () => started.resolve();
    let committedAt = 0;
    await db.transaction().execute(async (trx) => {
      await queue.enqueue(trx, 'test.wake', { n: 2 });
      // Still inside the transaction: the worker has been told, but the job is not there for it yet.
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(ran).toEqual([]);
      committedAt = Date.now();
    });
    await Promise.race([
      started.promise,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('the job did not run within 2 s')), 2_000),
      ),
    ]);
    expect(ran).toHaveLength(1);
    expect(ran[0]!.at).toBeGreaterThanOrEqual(committedAt);
    expect(ran[0]!.at - committedAt).toBeLessThan(2_000);
    await waitFor('the finished job to be removed', async () => (await jobsOf(db, 'test.wake')).length === 0);
  });

  it('runs a job promptly when it is rescheduled by key to now', async () => {
    const started = deferred();
    onRun = () => started.resolve();
    const before = ran.length;
    await queue.enqueue(db, 'test.wake', { n: 3 }, { key: 'later', runAt: Date.now() + 3_600_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ran).toHaveLength(before);
    expect(await queue.reschedule(db, 'test.wake', 'later', Date.now())).toBe(true);
    await Promise.race([
      started.promise,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('the job did not run within 2 s')), 2_000),
      ),
    ]);
    expect(ran).toHaveLength(before + 1);
  });
});

describe('wakes', () => {
  it("wakes this process's workers when its transaction commits, once: its own notification is not a second wake", async () => {
    const queue = new JobQueue(db, systemClock);
    const wakes: string[] = [];
    queue.onWake((kind) => wakes.push(kind));
    const listener =
      dialect === 'postgres'
        ? await listenOn(db, JOBS_CHANNEL, capturingLogger().logger, {
            message: (message) => queue.heard(message),
          })
        : undefined;
    try {
      await transaction(db, async (trx) => {
        await queue.enqueue(trx, 'test.echo', {});
        await queue.enqueue(trx, 'test.echo', {});
        expect(wakes).toEqual([]);
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(wakes).toEqual(['test.echo']);
      if (listener !== undefined) {
        // Another process's wake comes after the echo of ours (PostgreSQL delivers in commit order): once
        // it is heard, the echo was heard too, and did not wake anyone.
        await new JobQueue(db, systemClock).wakeAfterCommit(db, 'test.marker');
        await waitFor('the other wake', async () => wakes.includes('test.marker'));
        expect(wakes).toEqual(['test.echo', 'test.marker']);
      }
    } finally {
      await listener?.close();
      await db.deleteFrom('jobs').where('kind', '=', 'test.echo').execute();
    }
  });

  it('still wakes when the part of the transaction that asked first was rolled back to its savepoint', async () => {
    const queue = new JobQueue(db, systemClock);
    const wakes: string[] = [];
    queue.onWake((kind) => wakes.push(kind));
    await transaction(db, async (trx) => {
      const failing = inSavepoint(trx, async () => {
        await queue.wakeAfterCommit(trx, 'test.undone');
        throw new Error('the unit failed');
      });
      await expect(failing).rejects.toThrow('the unit failed');
      await inSavepoint(trx, () => queue.wakeAfterCommit(trx, 'test.undone'));
    });
    expect(wakes).toEqual(['test.undone']);
  });
});

describe('job keys', () => {
  const clock = new ManualClock(T0);
  let queue: JobQueue;
  beforeAll(() => {
    queue = new JobQueue(db, clock);
  });

  it('stores a job with its defaults', async () => {
    await queue.enqueue(db, 'test.defaults', { hello: 'world' });
    expect(await onlyJob(db, 'test.defaults')).toMatchObject({
      payload: JSON.stringify({ hello: 'world' }),
      key: null,
      state: 'queued',
      run_at: T0,
      attempts: 0,
      max_attempts: DEFAULT_MAX_ATTEMPTS,
      locked_by: null,
      last_error: null,
      created_at: T0,
    });
  });

  it('ignores a second enqueue with the key of an unfinished job, payload and time included', async () => {
    await queue.enqueue(db, 'test.key', { v: 1 }, { key: 'k1', runAt: T0 + 1_000 });
    await queue.enqueue(db, 'test.key', { v: 2 }, { key: 'k1', runAt: T0 + 9_000, maxAttempts: 2 });
    const job = await onlyJob(db, 'test.key');
    expect(job).toMatchObject({ payload: '{"v":1}', key: 'k1', run_at: T0 + 1_000, max_attempts: 10 });
  });

  it('keeps keys apart per kind, and never merges jobs without a key', async () => {
    await queue.enqueue(db, 'test.key-other', { v: 1 }, { key: 'k1' });
    await queue.enqueue(db, 'test.nokey', { v: 1 });
    await queue.enqueue(db, 'test.nokey', { v: 1 });
    expect(await jobsOf(db, 'test.key-other')).toHaveLength(1);
    expect(await jobsOf(db, 'test.nokey')).toHaveLength(2);
    expect(await jobsOf(db, 'test.key')).toHaveLength(1);
  });

  it('makes a new job for the key of a running job: the running one gives its key up', async () => {
    const clockNow = new ManualClock(T0);
    const kindQueue = new JobQueue(db, clockNow);
    const seen: number[] = [];
    const { worker } = testWorker({
      db,
      queue: kindQueue,
      clock: clockNow,
      handlers: [
        {
          kind: 'test.key-running',
          async handle(payload: { v: number }) {
            seen.push(payload.v);
            // The change this enqueue reports may come after the run read its input: it must run again.
            if (payload.v === 1) await kindQueue.enqueue(db, 'test.key-running', { v: 2 }, { key: 'busy' });
          },
        },
      ],
    });
    await kindQueue.enqueue(db, 'test.key-running', { v: 1 }, { key: 'busy' });
    expect(await worker.runDue()).toBe(2);
    expect(seen).toEqual([1, 2]);
    expect(await jobsOf(db, 'test.key-running')).toEqual([]);
  });

  it("keeps a periodic kind's one job when another worker starts while a tick runs", async () => {
    const clockNow = new ManualClock(T0);
    const periodicQueue = new JobQueue(db, clockNow);
    const ticking = deferred();
    const tickEnds = deferred();
    const handler: JobHandler<never> = {
      kind: 'test.periodic-start',
      everyMs: 60_000,
      async handle() {
        ticking.resolve();
        await tickEnds.promise;
      },
    };
    const first = testWorker({ db, queue: periodicQueue, clock: clockNow, handlers: [handler] }).worker;
    const second = testWorker({ db, queue: periodicQueue, clock: clockNow, handlers: [handler] }).worker;
    await first.start();
    try {
      await ticking.promise;
      // The tick runs in the first worker; the second starts and asks for the kind's job.
      await second.start();
      expect(await jobsOf(db, 'test.periodic-start')).toHaveLength(1);
      tickEnds.resolve();
      await waitFor('the tick to move to the next', async () => {
        const rows = await jobsOf(db, 'test.periodic-start');
        return rows.length === 1 && rows[0]!.run_at === T0 + 60_000 && rows[0]!.locked_by === null;
      });
    } finally {
      tickEnds.resolve();
      await Promise.all([first.stop(1_000), second.stop(1_000)]);
    }
  });

  it('still ignores the enqueue of a key whose job waits', async () => {
    const clockNow = new ManualClock(T0);
    const kindQueue = new JobQueue(db, clockNow);
    await kindQueue.enqueue(db, 'test.key-waiting', { v: 1 }, { key: 'once' });
    await kindQueue.enqueue(db, 'test.key-waiting', { v: 2 }, { key: 'once' });
    expect((await jobsOf(db, 'test.key-waiting')).map((job) => JSON.parse(job.payload))).toEqual([{ v: 1 }]);
  });

  it('frees the key once the job finished (removed) or went dead', async () => {
    let fail = false;
    const { worker } = testWorker({
      db,
      queue,
      clock,
      handlers: [
        {
          kind: 'test.key-reuse',
          async handle() {
            if (fail) throw new PermanentJobFailure('gone for good');
          },
        },
      ],
    });
    await queue.enqueue(db, 'test.key-reuse', { round: 1 }, { key: 'reused' });
    expect(await worker.runDue()).toBe(1);
    expect(await jobsOf(db, 'test.key-reuse')).toEqual([]);

    await queue.enqueue(db, 'test.key-reuse', { round: 2 }, { key: 'reused' });
    fail = true;
    expect(await worker.runDue()).toBe(1);
    expect(await onlyJob(db, 'test.key-reuse')).toMatchObject({ state: 'dead', payload: '{"round":2}' });

    await queue.enqueue(db, 'test.key-reuse', { round: 3 }, { key: 'reused' });
    const rows = await jobsOf(db, 'test.key-reuse');
    expect(rows.map((row) => [row.state, row.payload]).sort()).toEqual([
      ['dead', '{"round":2}'],
      ['queued', '{"round":3}'],
    ]);
  });
});

describe('cancel and reschedule by key', () => {
  const clock = new ManualClock(T0);
  let queue: JobQueue;
  let runs: string[];
  let worker: Worker;
  beforeAll(() => {
    queue = new JobQueue(db, clock);
    runs = [];
    ({ worker } = testWorker({
      db,
      queue,
      clock,
      handlers: [
        {
          kind: 'test.move',
          async handle(payload: { name: string }) {
            runs.push(payload.name);
          },
        },
      ],
    }));
  });

  it('cancels the waiting job of a key, once; a rolled-back cancel keeps it', async () => {
    await queue.enqueue(db, 'test.move', { name: 'cancelled' }, { key: 'c', runAt: T0 });
    await rolledBack(async (trx) => {
      expect(await queue.cancel(trx, 'test.move', 'c')).toBe(true);
    });
    expect(await jobsOf(db, 'test.move')).toHaveLength(1);
    expect(await queue.cancel(db, 'test.move', 'c')).toBe(true);
    expect(await queue.cancel(db, 'test.move', 'c')).toBe(false);
    expect(await queue.cancel(db, 'test.move', 'never-enqueued')).toBe(false);
    expect(await worker.runDue()).toBe(0);
    expect(runs).toEqual([]);
  });

  it('moves the waiting job of a key to another time', async () => {
    await queue.enqueue(db, 'test.move', { name: 'moved' }, { key: 'm', runAt: T0 });
    expect(await queue.reschedule(db, 'test.move', 'm', T0 + 60_000)).toBe(true);
    expect((await onlyJob(db, 'test.move')).run_at).toBe(T0 + 60_000);
    expect(await worker.runDue()).toBe(0);
    clock.set(T0 + 59_999);
    expect(await worker.runDue()).toBe(0);
    clock.set(T0 + 60_000);
    expect(await worker.runDue()).toBe(1);
    expect(runs).toEqual(['moved']);
    expect(await queue.reschedule(db, 'test.move', 'm', T0)).toBe(false);
  });

  it('neither cancels nor moves a dead job', async () => {
    const { worker: failing } = testWorker({
      db,
      queue,
      clock,
      handlers: [
        {
          kind: 'test.move-dead',
          async handle() {
            throw new PermanentJobFailure('no');
          },
        },
      ],
    });
    await queue.enqueue(db, 'test.move-dead', null, { key: 'd' });
    expect(await failing.runDue()).toBe(1);
    expect(await queue.reschedule(db, 'test.move-dead', 'd', clock.now() + 1_000)).toBe(false);
    expect(await queue.cancel(db, 'test.move-dead', 'd')).toBe(false);
    expect(await onlyJob(db, 'test.move-dead')).toMatchObject({ state: 'dead' });
  });
});

describe('enqueueMany', () => {
  it('inserts every job in one statement, in the caller transaction', async () => {
    const inserts: string[] = [];
    const counting: KyselyPlugin = {
      transformQuery(args) {
        if (args.node.kind === 'InsertQueryNode') inserts.push(args.queryId.queryId);
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const clock = new ManualClock(T0);
    const queue = new JobQueue(db, clock);
    const many = Array.from({ length: 250 }, (_, i) => ({
      kind: i % 2 === 0 ? 'test.many-even' : 'test.many-odd',
      payload: { i },
      options: i === 0 ? { runAt: T0 + 5_000, key: 'first' } : {},
    }));

    await rolledBack((trx) => queue.enqueueMany(trx.withPlugin(counting), many));
    expect(inserts).toHaveLength(1);
    expect(await jobsOf(db, 'test.many-even')).toEqual([]);

    inserts.length = 0;
    await db.transaction().execute((trx) => queue.enqueueMany(trx.withPlugin(counting), many));
    expect(inserts).toHaveLength(1);
    const even = await jobsOf(db, 'test.many-even');
    const odd = await jobsOf(db, 'test.many-odd');
    expect(even).toHaveLength(125);
    expect(odd).toHaveLength(125);
    expect(even.find((row) => row.key === 'first')).toMatchObject({ run_at: T0 + 5_000 });
    expect(new Set([...even, ...odd].map((row) => row.id)).size).toBe(250);
  });

  it('keeps the first of two jobs with the same key in one batch', async () => {
    const queue = new JobQueue(db, new ManualClock(T0));
    await queue.enqueueMany(db, [
      { kind: 'test.many-dup', payload: { n: 1 }, options: { key: 'same' } },
      { kind: 'test.many-dup', payload: { n: 2 }, options: { key: 'same' } },
      { kind: 'test.many-dup', payload: { n: 3 }, options: { key: 'other' } },
    ]);
    const rows = await jobsOf(db, 'test.many-dup');
    expect(rows.map((row) => [row.key, row.payload]).sort()).toEqual([
      ['other', '{"n":3}'],
      ['same', '{"n":1}'],
    ]);
  });

  it('does nothing for an empty list', async () => {
    const queue = new JobQueue(db, new ManualClock(T0));
    await queue.enqueueMany(db, []);
  });
});
