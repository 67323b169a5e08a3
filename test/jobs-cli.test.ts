import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../src/cli/program.js';
import { PermanentJobFailure } from '../src/jobs/outcomes.js';
import { JobQueue } from '../src/jobs/queue.js';
import { systemClock } from '../src/lib/clock.js';
import { jobById, jobsOf, openJobsDatabase, testWorker, type JobsDatabase } from './support/jobs-fixture.js';
import { serviceEnv } from './support/service-env.js';

interface Run {
  code: number;
  out: string[];
  err: string[];
}

async function cli(argv: string[], env: Record<string, string | undefined>): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (line) => out.push(line), err: (line) => err.push(line), env };
  const code = await runCli(argv, io);
  return { code, out, err };
}

let jobs: JobsDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  jobs = await openJobsDatabase();
  env = { ...serviceEnv(jobs.database), LOG_LEVEL: 'error' };
});
afterEach(() => {
  process.exitCode = undefined;
});
afterAll(async () => {
  await jobs.close();
});

describe('edgewatch jobs', () => {
  it('says there are no jobs on an empty queue', async () => {
    const run = await cli(['jobs'], env);
    expect(run.code, run.err.join('\n')).toBe(0);
    expect(run.out).toEqual(['No jobs.']);
  });

  it('lists counts by kind and state and the dead jobs; retry queues a dead job again, which then runs', async () => {
    const { db } = jobs;
    const queue = new JobQueue(db, systemClock);
    let broken = true;
    const succeeded: string[] = [];
    const { worker } = testWorker({
      db,
      queue,
      clock: systemClock,
      handlers: [
        {
          kind: 'test.cli-broken',
          async handle(_payload, run) {
            if (broken) throw new PermanentJobFailure('the endpoint refused the payload');
            succeeded.push(run.id);
          },
        },
      ],
    });
    await queue.enqueue(db, 'test.cli-broken', { n: 1 });
    await queue.enqueue(db, 'test.cli-later', null, { runAt: Date.now() + 3_600_000 });
    await queue.enqueue(db, 'test.cli-later', null, { runAt: Date.now() + 3_600_000 });
    await queue.enqueue(db, 'test.cli-waiting', null, { runAt: Date.now() - 1_000 });
    expect(await worker.runDue()).toBe(1);
    const [dead] = await jobsOf(db, 'test.cli-broken');
    expect(dead).toMatchObject({ state: 'dead', attempts: 1 });

    const listed = await cli(['jobs'], env);
    expect(listed.code, listed.err.join('\n')).toBe(0);
    const lines = listed.out.join('\n').split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^test\.cli-broken\s+dead\s+1$/));
    expect(lines).toContainEqual(expect.stringMatching(/^test\.cli-later\s+scheduled\s+2$/));
    expect(lines).toContainEqual(expect.stringMatching(/^test\.cli-waiting\s+due\s+1$/));
    expect(lines).toContain('Dead jobs (revive one with: edgewatch jobs retry <id>):');
    const deadLine = lines.find((line) => line.startsWith(dead!.id));
    expect(deadLine).toBe(
      `${dead!.id}  test.cli-broken  1 attempts  ${new Date(dead!.created_at).toISOString()}  ` +
        'the endpoint refused the payload',
    );

    const retried = await cli(['jobs', 'retry', dead!.id], env);
    expect(retried.code, retried.err.join('\n')).toBe(0);
    expect(retried.out).toEqual([`Job ${dead!.id} is queued again.`]);
    const revived = (await jobById(db, dead!.id))!;
    expect(revived).toMatchObject({ state: 'queued', attempts: 0, locked_by: null });
    expect(revived.run_at).toBeLessThanOrEqual(Date.now());

    const relisted = await cli(['jobs'], env);
    expect(relisted.out.join('\n')).toMatch(/^test\.cli-broken\s+due\s+1$/m);
    expect(relisted.out.join('\n')).not.toContain('Dead jobs');

    broken = false;
    expect(await worker.runDue()).toBe(1);
    expect(succeeded).toEqual([dead!.id]);
    expect(await jobById(db, dead!.id)).toBeUndefined();
  });

  it('refuses to retry a job that is not dead, or does not exist', async () => {
    const { db } = jobs;
    const queue = new JobQueue(db, systemClock);
    await queue.enqueue(db, 'test.cli-alive', null, { key: 'alive' });
    const [alive] = await jobsOf(db, 'test.cli-alive');
    for (const id of [alive!.id, '00000000-0000-7000-8000-000000000000']) {
      const run = await cli(['jobs', 'retry', id], env);
      expect(run.code).toBe(1);
      expect(run.err).toEqual([`No dead job with the id ${id}.`]);
    }
    expect(await jobById(db, alive!.id)).toMatchObject({ state: 'queued', attempts: 0 });
  });

  it('refuses to revive a dead job whose key a newer job holds, and changes neither', async () => {
    const { db } = jobs;
    const queue = new JobQueue(db, systemClock);
    const { worker } = testWorker({
      db,
      queue,
      clock: systemClock,
      handlers: [
        {
          kind: 'test.cli-keyed',
          async handle() {
            throw new PermanentJobFailure('no');
          },
        },
      ],
    });
    await queue.enqueue(db, 'test.cli-keyed', { n: 1 }, { key: 'device-7' });
    expect(await worker.runDue()).toBe(1);
    await queue.enqueue(db, 'test.cli-keyed', { n: 2 }, { key: 'device-7', runAt: Date.now() + 60_000 });
    const [dead, newer] = await jobsOf(db, 'test.cli-keyed');
    expect(dead).toMatchObject({ state: 'dead' });
    expect(newer).toMatchObject({ state: 'queued' });

    const run = await cli(['jobs', 'retry', dead!.id], env);
    expect(run.code).toBe(1);
    expect(run.err).toEqual([
      `Job ${dead!.id} cannot be queued again: a newer job of its kind holds its key, and does its work.`,
    ]);
    expect(await jobById(db, dead!.id)).toMatchObject({ state: 'dead', attempts: 1 });
    expect(await jobById(db, newer!.id)).toMatchObject({ state: 'queued', payload: '{"n":2}' });
  });
});

describe('serve roles', () => {
  const sqliteEnv = (dir: string) => ({ DATABASE_URL: `sqlite:${dir}/roles.db`, LOG_LEVEL: 'error' });

  for (const argv of [['serve', '--role', 'worker'], ['serve', '--role', 'api'], ['worker']]) {
    it(`stops "${argv.join(' ')}" on SQLite with a clear message`, async () => {
      const run = await cli(argv, sqliteEnv(jobs.database.dataDir));
      expect(run.code).toBe(1);
      const role = argv[0] === 'worker' ? 'worker' : argv[2];
      expect(run.err).toEqual([
        `--role ${role} needs PostgreSQL: on the embedded SQLite database one process runs the API and the ` +
          'worker together. Leave out --role, or set DATABASE_URL to a postgres:// URL.',
      ]);
      expect(run.out).toEqual([]);
    });
  }

  it('refuses an unknown role', async () => {
    const run = await cli(['serve', '--role', 'cron'], sqliteEnv(jobs.database.dataDir));
    expect(run.code).not.toBe(0);
    expect(run.err.join('\n')).toMatch(/Allowed choices are all, api, worker/);
  });
});
