import { describe, expect, it } from 'vitest';
import { allColumns, Prepared, rowsSlots, slot, slots } from '../src/db/prepared.js';
import type { Db, Executor } from '../src/db/types.js';
import { listRuns, type TestRun } from './support/jobs-tables.js';
import { jobsDatabaseOfFile } from './support/jobs-fixture.js';

let db: Db;
jobsDatabaseOfFile((opened) => (db = opened));

const runs = (db: Executor) => db.withTables<{ test_runs: TestRun }>();
const RUN_COLUMNS = allColumns<TestRun>({ kind: true, job_id: true, worker: true, attempt: true, at: true });
const run = (job: string, attempt: number): TestRun => ({
  kind: 'prepared',
  job_id: job,
  worker: 'w',
  attempt,
  at: attempt,
});

describe('a query compiled once', () => {
  it('builds once per shape, and runs with the values of each call', async () => {
    const shapes: number[] = [];
    const insert = new Prepared((db: Executor, shape: { count: number }) => {
      shapes.push(shape.count);
      return runs(db)
        .insertInto('test_runs')
        .values(rowsSlots<TestRun>('rows', RUN_COLUMNS, shape.count));
    });
    expect((await insert.run(db, { count: 2 }, { rows: [run('a', 1), run('b', 2)] })).changed).toBe(2);
    expect((await insert.run(db, { count: 2 }, { rows: [run('c', 3), run('d', 4)] })).changed).toBe(2);
    expect((await insert.run(db, { count: 1 }, { rows: [run('e', 5)] })).changed).toBe(1);
    expect(shapes).toEqual([2, 1]);
    const jobsOf = new Prepared((db: Executor, shape: { count: number }) =>
      runs(db)
        .selectFrom('test_runs')
        .select('job_id')
        .where('kind', '=', slot<string>('kind'))
        .where('job_id', 'in', slots<string>('ids', shape.count))
        .orderBy('job_id'),
    );
    const found = await jobsOf.execute(db, { count: 3 }, { kind: 'prepared', ids: ['e', 'a', 'x'] });
    expect(found.map((row) => row.job_id)).toEqual(['a', 'e']);
    expect((await listRuns(db, 'prepared')).map((row) => row.attempt)).toEqual([1, 2, 3, 4, 5]);
  });

  it('refuses to run with a value missing, rather than store or compare a NULL', async () => {
    const byJob = new Prepared((db: Executor, shape: { count: number }) =>
      runs(db)
        .updateTable('test_runs')
        .set({ worker: slot<string>('worker') })
        .where('job_id', 'in', slots<string>('ids', shape.count)),
    );
    await expect(byJob.run(db, { count: 1 }, { ids: ['a'] })).rejects.toThrow('no value for the slot worker');
    await expect(byJob.run(db, { count: 2 }, { worker: 'v', ids: ['a'] })).rejects.toThrow(
      'no value for the slot ids[1]',
    );
    const insert = new Prepared((db: Executor) =>
      runs(db)
        .insertInto('test_runs')
        .values(rowsSlots<TestRun>('rows', RUN_COLUMNS, 1)),
    );
    const partial = { kind: 'prepared', job_id: 'z', worker: 'w', attempt: 9 } as TestRun;
    await expect(insert.run(db, {}, { rows: [partial] })).rejects.toThrow('no value for the slot rows[0].at');
    expect((await byJob.run(db, { count: 2 }, { worker: 'v', ids: ['a', 'b'] })).changed).toBe(2);
    expect(
      (await listRuns(db, 'prepared')).filter((row) => row.worker === 'v').map((row) => row.job_id),
    ).toEqual(['a', 'b']);
  });
});
