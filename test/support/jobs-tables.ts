import type { Db, Executor } from '../../src/db/types.js';

/** One row per handler run, written by the handlers of the job tests (in this process or a child). */
export interface TestRunsTable {
  kind: string;
  job_id: string;
  worker: string;
  attempt: number;
  /** Epoch ms when the run started. */
  at: number;
}

export type TestRun = TestRunsTable;

function withRuns(db: Executor) {
  return db.withTables<{ test_runs: TestRunsTable }>();
}

export async function createTestRunsTable(db: Db): Promise<void> {
  await db.schema
    .createTable('test_runs')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('worker', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function recordRun(db: Executor, run: TestRun): Promise<void> {
  await withRuns(db).insertInto('test_runs').values(run).execute();
}

export async function listRuns(db: Db, kind?: string): Promise<TestRun[]> {
  let query = withRuns(db).selectFrom('test_runs').selectAll().orderBy('at');
  if (kind !== undefined) query = query.where('kind', '=', kind);
  const rows = await query.execute();
  return rows.map((row) => ({ ...row, attempt: Number(row.attempt), at: Number(row.at) }));
}
