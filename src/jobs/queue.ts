import { randomBytes } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { isPostgres } from '../db/connect.js';
import { databaseNow, preparedNow, type PreparedNow } from '../db/now.js';
import { afterCommitOnce } from '../db/transaction.js';
import type { Db, Executor } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import * as repo from './repo.js';

export const DEFAULT_MAX_ATTEMPTS = 10;

/** The PostgreSQL channel every enqueue notifies on commit; the payload is `<schema>:<kind>[:<sender>]`. */
export const JOBS_CHANNEL = 'edgewatch_jobs';

export interface EnqueueOptions {
  /** When the job is due (epoch ms); now when omitted. */
  runAt?: number;
  /**
   * At most one waiting job per kind and key: a second enqueue with it changes nothing while the first
   * waits. A running job gives its key up, so an enqueue during its run makes a new job (the change it
   * reports may have come after the run read its input).
   */
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
 * exists exactly when the change that caused it commits. Idle workers are woken after that commit: this
 * process's by the commit, and on PostgreSQL every other process's by NOTIFY (delivered only on commit).
 */
export class JobQueue {
  private readonly listeners = new Set<WakeListener>();
  private readonly postgres: boolean;
  /** Names this process in its notifications (see `heard`). */
  private readonly sender = randomBytes(6).toString('hex');

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    this.postgres = isPostgres(db);
  }

  /**
   * Now, as due times and leases are compared with it: the database's clock on PostgreSQL (see
   * db/now.ts). Producers whose work is due at once (a new delivery) date it with this.
   */
  now(db: Executor): RawBuilder<number> {
    return databaseNow(db, this.clock);
  }

  /** `now` for a statement compiled once (db/prepared.ts). */
  preparedNow(db: Executor): PreparedNow {
    return preparedNow(db, this.clock);
  }

  async enqueue<P>(db: Executor, kind: string, payload: P, options: EnqueueOptions = {}): Promise<void> {
    await this.enqueueMany(db, [{ kind, payload, options }]);
  }

  /** Many jobs in one statement (and one wake per kind due now), in the caller's transaction. */
  async enqueueMany(db: Executor, jobs: readonly JobRequest[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = this.clock.now();
    const rows = jobs.map((job): repo.NewJob => ({
      id: newId(now),
      kind: job.kind,
      payload: JSON.stringify(job.payload ?? null),
      key: job.options?.key ?? null,
      runAt: job.options?.runAt ?? now,
      maxAttempts: job.options?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      createdAt: now,
    }));
    await repo.insertJobs(db, rows, databaseNow(db, this.clock));
    for (const kind of new Set(rows.filter((row) => row.runAt <= now).map((row) => row.kind))) {
      await this.wakeAfterCommit(db, kind);
    }
  }

  /**
   * The one job of each periodic kind (key `key`), due at `runAt` unless it exists already, waiting or
   * running: a periodic job is never handed over, it moves itself to its next tick.
   */
  async ensurePeriodic(db: Executor, kinds: readonly string[], key: string, runAt: number): Promise<void> {
    if (kinds.length === 0) return;
    const now = this.clock.now();
    await repo.insertUnlessKeyTaken(
      db,
      kinds.map((kind) => ({
        id: newId(now),
        kind,
        payload: 'null',
        key,
        runAt,
        maxAttempts: DEFAULT_MAX_ATTEMPTS,
        createdAt: now,
      })),
    );
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
    const moved = await repo.moveByKey(db, kind, key, runAt, databaseNow(db, this.clock));
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

  /**
   * A notification heard on the jobs channel, its schema taken off (`<kind>:<sender>`): wakes this
   * process's workers, unless this process sent it and woke them itself on commit.
   */
  heard(message: string): void {
    const at = message.indexOf(':');
    if (at < 0) return this.wakeLocal(message);
    if (message.slice(at + 1) !== this.sender) this.wakeLocal(message.slice(0, at));
  }

  /**
   * Wakes the workers for `kind` once `db`'s transaction (if any) commits: this process's by the commit
   * itself, every other's by NOTIFY (which PostgreSQL delivers on commit). A transaction wakes each kind once.
   */
  async wakeAfterCommit(db: Executor, kind: string): Promise<void> {
    const wake = () => this.wakeLocal(kind);
    if (!db.isTransaction) {
      setImmediate(wake);
      return this.notifyOthers(db, kind, true);
    }
    const registered = afterCommitOnce(db, `wake:${kind}`, wake);
    if (registered === 'already') return;
    await this.notifyOthers(db, kind, registered === 'registered');
  }

  /**
   * PostgreSQL: NOTIFY every process's workers; naming this process as the sender when it woke its own
   * (see `heard`). SQLite has no other process: its workers are woken here unless they were already.
   */
  private async notifyOthers(db: Executor, kind: string, wokenHere: boolean): Promise<void> {
    if (!this.postgres) {
      // A claim waits for the one connection, so it comes after the caller's commit.
      if (!wokenHere) setImmediate(() => this.wakeLocal(kind));
      return;
    }
    const message = wokenHere ? `${kind}:${this.sender}` : kind;
    await sql`select pg_notify(${JOBS_CHANNEL}, current_schema() || ':' || ${message})`.execute(db);
  }
}
