import { sql } from 'kysely';
import { isPostgres } from '../db/connect.js';
import type { Db, Executor } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import * as repo from './repo.js';

export const DEFAULT_MAX_ATTEMPTS = 10;

/** The PostgreSQL channel every enqueue notifies on commit; the payload is `<schema>:<kind>`. */
export const JOBS_CHANNEL = 'edgewatch_jobs';

export interface EnqueueOptions {
  /** When the job is due (epoch ms); now when omitted. */
  runAt?: number;
  /** At most one unfinished job per kind and key: a second enqueue with it changes nothing. */
  key?: string;
  maxAttempts?: number;
}

export interface JobRequest<P = unknown> {
  kind: string;
  payload: P;
  options?: EnqueueOptions;
}

type WakeListener = (kind: string) => void;

/**
 * The producing side of the one durable queue. Jobs are written in the caller's transaction, so a job
 * exists exactly when the change that caused it commits. Idle workers are woken after that commit:
 * on PostgreSQL by NOTIFY (delivered only on commit, to every process), on SQLite in process, right after
 * the current work yields — a claim waits for the single connection, so it runs after the commit.
 */
export class JobQueue {
  private readonly listeners = new Set<WakeListener>();
  private readonly postgres: boolean;

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    this.postgres = isPostgres(db);
  }

  async enqueue<P>(db: Executor, kind: string, payload: P, options: EnqueueOptions = {}): Promise<void> {
    await this.enqueueMany(db, [{ kind, payload, options }]);
  }

  /** Many jobs in one statement (and one wake per kind). */
  async enqueueMany(db: Executor, jobs: readonly JobRequest[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = this.clock.now();
    await repo.insertJobs(
      db,
      jobs.map((job) => ({
        id: newId(now),
        kind: job.kind,
        payload: JSON.stringify(job.payload ?? null),
        key: job.options?.key ?? null,
        runAt: job.options?.runAt ?? now,
        maxAttempts: job.options?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        createdAt: now,
      })),
    );
    const kinds = new Set(jobs.filter((job) => (job.options?.runAt ?? now) <= now).map((job) => job.kind));
    for (const kind of kinds) await this.wakeAfterCommit(db, kind);
  }

  /** Removes the unfinished job of this kind and key; false when there was none. */
  async cancel(db: Executor, kind: string, key: string): Promise<boolean> {
    return (await repo.cancelByKeys(db, kind, [key])) > 0;
  }

  /** Removes the unfinished jobs of this kind with any of these keys, in one statement; how many. */
  async cancelMany(db: Executor, kind: string, keys: readonly string[]): Promise<number> {
    return repo.cancelByKeys(db, kind, keys);
  }

  /** Moves the waiting job of this kind and key to another time; false when none waits. */
  async reschedule(db: Executor, kind: string, key: string, runAt: number): Promise<boolean> {
    const moved = await repo.moveByKey(db, kind, key, runAt, this.clock.now());
    if (moved && runAt <= this.clock.now()) await this.wakeAfterCommit(db, kind);
    return moved;
  }

  /** Workers in this process hear of new due jobs here. */
  onWake(listener: WakeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells this process's workers that jobs of `kind` may be due (used by the PostgreSQL listener too). */
  wakeLocal(kind: string): void {
    for (const listener of this.listeners) listener(kind);
  }

  /** Wakes idle workers of every process for `kind`, once `db`'s transaction (if any) commits. */
  async wakeAfterCommit(db: Executor, kind: string): Promise<void> {
    if (this.postgres) {
      await sql`select pg_notify(${JOBS_CHANNEL}, current_schema() || ':' || ${kind})`.execute(db);
    } else if (this.listeners.size > 0) {
      setImmediate(() => this.wakeLocal(kind));
    }
  }
}
