import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../src/jobs/queue.js';
import type { JobHandler, Worker } from '../src/jobs/worker.js';
import { systemClock } from '../src/lib/clock.js';
import { dialect, openJobsDatabase, testWorker, waitFor, type JobsDatabase } from './support/jobs-fixture.js';

const KIND = 'test.wake-target';

let jobs: JobsDatabase;
beforeAll(async () => {
  jobs = await openJobsDatabase();
});
afterAll(async () => {
  await jobs.close();
});

if (dialect === 'sqlite')
  it('has no listening workers on SQLite: wakes stay in the process', async () => {
    expect(await new JobQueue(jobs.db, systemClock).listeningWorkers()).toEqual([]);
  });

// Several listening workers exist only on PostgreSQL.
if (dialect === 'postgres')
  describe('waking workers on PostgreSQL', () => {
    const ranBy: string[] = [];
    let queue: JobQueue;
    let workers: Worker[] = [];

    /** A worker that records its own name for each job; it never polls, so only wakes start its jobs. */
    function namedWorker(name: string): Worker {
      const handler: JobHandler<never> = {
        kind: KIND,
        handle() {
          ranBy.push(name);
          return Promise.resolve();
        },
      };
      return testWorker({
        db: jobs.db,
        queue: new JobQueue(jobs.db, systemClock),
        clock: systemClock,
        handlers: [handler],
      }).worker;
    }

    beforeAll(async () => {
      queue = new JobQueue(jobs.db, systemClock);
      workers = [namedWorker('a'), namedWorker('b')];
      for (const worker of workers) await worker.start();
    });
    afterAll(async () => {
      for (const worker of workers) await worker.stop(1_000);
    });

    it('knows the listening workers of its schema by their ids', async () => {
      expect((await queue.listeningWorkers()).sort()).toEqual(workers.map((worker) => worker.id).sort());
    });

    it('wakes one listening worker at a time, each in turn', async () => {
      await queue.listeningWorkers();
      for (let job = 1; job <= 10; job += 1) {
        await queue.enqueue(jobs.db, KIND, { job });
        await waitFor(`job ${job} to run`, () => ranBy.length === job);
      }
      const pairs = ranBy.slice(1).map((name, index) => `${ranBy[index] ?? ''}${name}`);
      expect(pairs.every((pair) => pair === 'ab' || pair === 'ba')).toBe(true);
    });

    it('wakes the others when a worker leaves', async () => {
      const leaving = workers.pop() as Worker;
      await leaving.stop(1_000);
      expect(await queue.listeningWorkers()).toEqual(workers.map((worker) => worker.id));
      const before = ranBy.length;
      await queue.enqueue(jobs.db, KIND, { job: 'after' });
      await waitFor('the job to run', () => ranBy.length === before + 1);
      expect(ranBy.at(-1)).toBe('a');
    });
  });
