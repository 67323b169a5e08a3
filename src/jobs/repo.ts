import { sql } from 'kysely';
import type { Executor, JobsTable } from '../db/types.js';

export type JobRow = JobsTable;

/** A job as a worker holds it: `attempts` counts this run, and fences every later write of it. */
export type ClaimedJob = Pick<JobRow, 'id' | 'kind' | 'payload' | 'key' | 'attempts' | 'max_attempts'>;

export interface NewJob {
  id: string;
  kind: string;
  payload: string;
  key: string | null;
  runAt: number;
  maxAttempts: number;
  createdAt: number;
}

/** Inserts jobs in one statement; a job whose key an unfinished job of its kind holds is skipped. */
export async function insertJobs(db: Executor, jobs: readonly NewJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await db
    .insertInto('jobs')
    .values(
      jobs.map((job) => ({
        id: job.id,
        kind: job.kind,
        payload: job.payload,
        key: job.key,
        state: 'queued' as const,
        run_at: job.runAt,
        attempts: 0,
        max_attempts: job.maxAttempts,
        locked_by: null,
        last_error: null,
        created_at: job.createdAt,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['kind', 'key'])
        .where(sql<boolean>`state = 'queued' and key is not null`)
        .doNothing(),
    )
    .execute();
}

/**
 * Takes up to `limit` due jobs of one kind and leases them until `leaseUntil`. On PostgreSQL the rows are
 * locked with SKIP LOCKED, so concurrent workers never take the same job; SQLite has one writer.
 */
export async function claimDue(
  db: Executor,
  options: {
    kind: string;
    now: number;
    leaseUntil: number;
    limit: number;
    workerId: string;
    skipLocked: boolean;
  },
): Promise<ClaimedJob[]> {
  let due = db
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', options.kind)
    .where('state', '=', 'queued')
    .where('run_at', '<=', options.now)
    .orderBy('run_at')
    .limit(options.limit);
  if (options.skipLocked) due = due.forUpdate().skipLocked();
  return db
    .updateTable('jobs')
    .set((eb) => ({
      run_at: options.leaseUntil,
      attempts: eb('attempts', '+', 1),
      locked_by: options.workerId,
    }))
    .where('id', 'in', due)
    .returning(['id', 'kind', 'payload', 'key', 'attempts', 'max_attempts'])
    .execute();
}

/** Finished jobs leave the table. */
export async function deleteJobs(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('jobs').where('id', 'in', ids).execute();
}

/** The next run of a job after a failure, or of a periodic job after a success; fenced by its attempt. */
export async function rescheduleJob(
  db: Executor,
  job: Pick<ClaimedJob, 'id' | 'attempts'>,
  changes: { runAt: number; lastError: string | null; resetAttempts?: boolean },
): Promise<void> {
  await db
    .updateTable('jobs')
    .set({
      run_at: changes.runAt,
      last_error: changes.lastError,
      locked_by: null,
      ...(changes.resetAttempts === true ? { attempts: 0 } : {}),
    })
    .where('id', '=', job.id)
    .where('attempts', '=', job.attempts)
    .execute();
}

export async function markDead(
  db: Executor,
  job: Pick<ClaimedJob, 'id' | 'attempts'>,
  lastError: string,
): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ state: 'dead', locked_by: null, last_error: lastError })
    .where('id', '=', job.id)
    .where('attempts', '=', job.attempts)
    .execute();
}

/** Gives leased jobs back at shutdown: due at once, and the interrupted run does not count as an attempt. */
export async function releaseJobs(
  db: Executor,
  jobs: readonly Pick<ClaimedJob, 'id' | 'attempts'>[],
  now: number,
): Promise<void> {
  for (const job of jobs) {
    await db
      .updateTable('jobs')
      .set((eb) => ({ run_at: now, locked_by: null, attempts: eb('attempts', '-', 1) }))
      .where('id', '=', job.id)
      .where('attempts', '=', job.attempts)
      .execute();
  }
}

export async function cancelByKey(db: Executor, kind: string, key: string): Promise<boolean> {
  const result = await db
    .deleteFrom('jobs')
    .where('kind', '=', kind)
    .where('key', '=', key)
    .where('state', '=', 'queued')
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Moves a waiting job; a running one keeps its lease (its handler reads the current state anyway). */
export async function moveByKey(db: Executor, kind: string, key: string, runAt: number): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ run_at: runAt })
    .where('kind', '=', kind)
    .where('key', '=', key)
    .where('state', '=', 'queued')
    .where('locked_by', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface JobCount {
  kind: string;
  state: 'due' | 'scheduled' | 'running' | 'dead';
  count: number;
}

/** Jobs by kind and state: running (leased), due (waiting for a worker), scheduled (later), dead. */
export async function countJobs(db: Executor, now: number): Promise<JobCount[]> {
  const rows = await db
    .selectFrom('jobs')
    .select((eb) => [
      'kind',
      eb
        .case()
        .when('state', '=', 'dead')
        .then('dead')
        .when('locked_by', 'is not', null)
        .then('running')
        .when('run_at', '<=', now)
        .then('due')
        .else('scheduled')
        .end()
        // Not `state`: PostgreSQL would group by the column of that name rather than this expression.
        .as('bucket'),
      eb.fn.countAll<number | string>().as('n'),
    ])
    .groupBy(['kind', 'bucket'])
    .orderBy('kind')
    .execute();
  return rows.map((row) => ({
    kind: row.kind,
    state: row.bucket as JobCount['state'],
    count: Number(row.n),
  }));
}

/** How long the longest-waiting due job has waited, in ms (0 when none is due). */
export async function oldestDueAge(db: Executor, now: number): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.min('run_at').as('oldest'))
    .where('state', '=', 'queued')
    .where('locked_by', 'is', null)
    .where('run_at', '<=', now)
    .executeTakeFirst();
  return row?.oldest === null || row?.oldest === undefined ? 0 : now - Number(row.oldest);
}

export async function listDead(db: Executor, limit: number): Promise<JobRow[]> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('state', '=', 'dead')
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** A dead job queued again with a fresh count of attempts; false when there is no dead job with that id. */
export async function reviveDead(db: Executor, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ state: 'queued', attempts: 0, run_at: now, locked_by: null })
    .where('id', '=', id)
    .where('state', '=', 'dead')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Removes dead jobs created before `before`; returns how many. */
export async function pruneDead(db: Executor, before: number): Promise<number> {
  const result = await db
    .deleteFrom('jobs')
    .where('state', '=', 'dead')
    .where('created_at', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
