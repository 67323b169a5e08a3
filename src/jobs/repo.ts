import { sql, type RawBuilder } from 'kysely';
import { isPostgres } from '../db/connect.js';
import type { Executor, JobsTable } from '../db/types.js';

export type JobRow = JobsTable;

/**
 * A job as a worker holds it. Its claimer and `attempts` (which counts this run) fence every later write
 * of the run: a run whose lease was given back or taken over cannot touch the newer run's row.
 */
export type ClaimedJob = Pick<
  JobRow,
  'id' | 'kind' | 'payload' | 'key' | 'attempts' | 'max_attempts' | 'locked_by'
>;

/** What fences a write of a run. */
type RunFence = Pick<ClaimedJob, 'id' | 'attempts' | 'locked_by'>;

export interface NewJob {
  id: string;
  kind: string;
  payload: string;
  key: string | null;
  runAt: number;
  maxAttempts: number;
  createdAt: number;
}

/**
 * Inserts jobs; a job whose key a waiting job of its kind holds is skipped (that job will do). A running
 * job gives its key up to the new one (graphile-worker's rule): it may have read its input before the
 * change this enqueue reports, so skipping the new job could lose that change.
 */
export async function insertJobs(
  db: Executor,
  jobs: readonly NewJob[],
  now: RawBuilder<number>,
): Promise<void> {
  if (jobs.length === 0) return;
  const inserted = new Set(await insertUnlessKeyTaken(db, jobs));
  const refused = jobs.filter((job) => !inserted.has(job.id) && job.key !== null);
  if (refused.length === 0) return;
  await db
    .updateTable('jobs')
    .set({ key: null })
    .where('state', '=', 'queued')
    .where('locked_by', 'is not', null)
    .where('run_at', '>', now)
    .where((eb) => eb.or(refused.map((job) => eb.and([eb('kind', '=', job.kind), eb('key', '=', job.key)]))))
    .execute();
  await insertUnlessKeyTaken(db, refused);
}

/**
 * Inserts jobs, skipping each whose key an unfinished job of its kind holds, running or not; returns the
 * ids inserted. For a periodic kind's one job: a running tick keeps it, and moves it to the next tick.
 */
export async function insertUnlessKeyTaken(db: Executor, jobs: readonly NewJob[]): Promise<string[]> {
  const inserted = await db
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
    .returning('id')
    .execute();
  return inserted.map((row) => row.id);
}

/**
 * Takes up to `limit` due jobs of one kind and leases them for `leaseMs`: one statement, the due rows
 * chosen in a materialized CTE (so the LIMIT holds however the planner runs it) and, on PostgreSQL,
 * locked with SKIP LOCKED, so concurrent workers never take the same job; SQLite has one writer.
 */
export async function claimDue(
  db: Executor,
  options: { kind: string; now: RawBuilder<number>; leaseMs: number; limit: number; workerId: string },
): Promise<ClaimedJob[]> {
  const { now } = options;
  const claimed = await db
    .with(
      (cte) => cte('due').materialized(),
      (qb) => {
        const due = qb
          .selectFrom('jobs')
          .select('id')
          .where('kind', '=', options.kind)
          .where('state', '=', 'queued')
          .where('run_at', '<=', now)
          .orderBy('run_at')
          .orderBy('id')
          .limit(options.limit);
        return isPostgres(db) ? due.forUpdate().skipLocked() : due;
      },
    )
    .updateTable('jobs')
    .set((eb) => ({
      run_at: eb(now, '+', options.leaseMs),
      attempts: eb('attempts', '+', 1),
      locked_by: options.workerId,
    }))
    .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
    .returning(['id', 'kind', 'payload', 'key', 'attempts', 'max_attempts', 'locked_by'])
    .execute();
  // RETURNING follows no order; ids are time-ordered (UUIDv7, to the millisecond), so a batch starts
  // with the oldest jobs.
  return claimed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Of these kinds, the ones with a job due now: one statement (an index probe per kind), so that a worker's
 * safety-net poll costs one query however many kinds it runs, rather than a claim each.
 */
export async function kindsWithDueJobs(
  db: Executor,
  kinds: readonly string[],
  now: RawBuilder<number>,
): Promise<string[]> {
  if (kinds.length === 0) return [];
  const row = await db
    .selectNoFrom((eb) =>
      kinds.map((kind, k) =>
        eb
          .exists(
            eb
              .selectFrom('jobs')
              .select('id')
              .where('kind', '=', kind)
              .where('state', '=', 'queued')
              .where('run_at', '<=', now),
          )
          .as(`due_${k}`),
      ),
    )
    .executeTakeFirst();
  // PostgreSQL answers booleans, SQLite 0 or 1.
  const due = Object.values(row ?? {}).map((value) => value === true || Number(value) === 1);
  return kinds.filter((_, k) => due[k] === true);
}

/** Finished jobs leave the table. */
export async function deleteJobs(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('jobs').where('id', 'in', ids).execute();
}

/** The next run of a job after a failure, or of a periodic job after a success; fenced by its attempt. */
export async function rescheduleJob(
  db: Executor,
  job: RunFence,
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
    .where('locked_by', '=', job.locked_by)
    .execute();
}

export async function markDead(db: Executor, job: RunFence, lastError: string): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ state: 'dead', locked_by: null, last_error: lastError })
    .where('id', '=', job.id)
    .where('attempts', '=', job.attempts)
    .where('locked_by', '=', job.locked_by)
    .execute();
}

/**
 * Gives leased jobs back (at shutdown, or held too long): due at once, and the run that did not happen
 * does not count as an attempt. One statement; each row is fenced by its claimer and attempt.
 */
export async function releaseJobs(db: Executor, jobs: readonly RunFence[], now: number): Promise<void> {
  if (jobs.length === 0) return;
  await db
    .updateTable('jobs')
    .set((eb) => ({ run_at: now, locked_by: null, attempts: eb('attempts', '-', 1) }))
    .where((eb) =>
      eb.or(
        jobs.map((job) =>
          eb.and([
            eb('id', '=', job.id),
            eb('attempts', '=', job.attempts),
            eb('locked_by', '=', job.locked_by),
          ]),
        ),
      ),
    )
    .execute();
}

/** Removes the unfinished jobs of this kind with these keys; how many there were. */
export async function cancelByKeys(db: Executor, kind: string, keys: readonly string[]): Promise<number> {
  if (keys.length === 0) return 0;
  const result = await db
    .deleteFrom('jobs')
    .where('kind', '=', kind)
    .where('key', 'in', keys)
    .where('state', '=', 'queued')
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Moves a waiting job (or one whose worker died: its lease has passed); a running one keeps its lease,
 * and its handler reads the current state anyway.
 */
export async function moveByKey(
  db: Executor,
  kind: string,
  key: string,
  runAt: number,
  now: RawBuilder<number>,
): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ run_at: runAt, locked_by: null })
    .where('kind', '=', kind)
    .where('key', '=', key)
    .where('state', '=', 'queued')
    .where((eb) => eb.or([eb('locked_by', 'is', null), eb('run_at', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface JobCount {
  kind: string;
  state: 'due' | 'scheduled' | 'running' | 'dead';
  count: number;
}

/**
 * Jobs by kind and state: due (waiting for a worker, including a dead worker's job whose lease has
 * passed), running (under a live lease), scheduled (later), dead.
 */
export async function countJobs(db: Executor, now: number): Promise<JobCount[]> {
  const rows = await db
    .selectFrom('jobs')
    .select((eb) => [
      'kind',
      eb
        .case()
        .when('state', '=', 'dead')
        .then('dead')
        .when('run_at', '<=', now)
        .then('due')
        .when('locked_by', 'is not', null)
        .then('running')
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

/**
 * How long the longest-waiting due job has waited, in ms (0 when none is due). A live lease ends in the
 * future, so running jobs are not due; a dead worker's job is, from the end of its lease.
 */
export async function oldestDueAge(db: Executor, now: number): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.min('run_at').as('oldest'))
    .where('state', '=', 'queued')
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
