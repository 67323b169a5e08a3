import { sql } from 'kysely';
import { isPostgres } from '../db/connect.js';
import { afterCommit } from '../db/transaction.js';
import type { Db, Executor } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import * as repo from './repo.js';
import { WakeTargets } from './wake-targets.js';

export const DEFAULT_MAX_ATTEMPTS = 10;

/**
 * The PostgreSQL channel every enqueue notifies on commit; the payload is `<schema>:<kind>`, followed by
 * `>` and a worker's id when the wake is for that worker alone.
 */
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

/** A worker of this process that starts the jobs of a kind it is given, without claiming them. */
export interface LocalRunner {
  workerId: string;
  leaseMs: number;
  start(jobs: repo.ClaimedJob[]): void;
}

/**
 * The producing side of the one durable queue. Jobs are written in the caller's transaction, so a job
 * exists exactly when the change that caused it commits. Idle workers are woken after that commit:
 * on PostgreSQL by NOTIFY (delivered only on commit, to every process), on SQLite in process, right after
 * the current work yields — a claim waits for the single connection, so it runs after the commit.
 */
export class JobQueue {
  private readonly listeners = new Set<WakeListener>();
  private readonly localRunners = new Map<string, LocalRunner>();
  private readonly postgres: boolean;
  private readonly targets: WakeTargets | undefined;
  /** The kinds already woken by an open transaction, so that its units notify once. */
  private readonly woken = new WeakMap<Executor, Set<string>>();

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    this.postgres = isPostgres(db);
    this.targets = this.postgres ? new WakeTargets(db) : undefined;
  }

  async enqueue<P>(db: Executor, kind: string, payload: P, options: EnqueueOptions = {}): Promise<void> {
    await this.enqueueMany(db, [{ kind, payload, options }]);
  }

  /**
   * Many jobs in one statement (and one wake per kind). A due job of a kind this process's worker starts on
   * commit is leased to it in the same row, when the caller's transaction reports its commit, and started
   * right after: no claim, no wake. Should the process die first, the lease runs out and any worker takes it.
   */
  async enqueueMany(db: Executor, jobs: readonly JobRequest[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = this.clock.now();
    const starting = new Map<LocalRunner, repo.ClaimedJob[]>();
    const canStart =
      jobs.some((job) => this.localRunners.has(job.kind)) &&
      afterCommit(db, () => {
        for (const [runner, started] of starting) runner.start(started);
      });
    const runners = new Map<string, LocalRunner>();
    const rows = jobs.map((job): repo.NewJob => {
      const runAt = job.options?.runAt ?? now;
      const local = canStart && runAt <= now ? this.localRunners.get(job.kind) : undefined;
      const id = newId(now);
      if (local !== undefined) runners.set(id, local);
      return {
        id,
        kind: job.kind,
        payload: JSON.stringify(job.payload ?? null),
        key: job.options?.key ?? null,
        runAt: local === undefined ? runAt : now + local.leaseMs,
        maxAttempts: job.options?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        createdAt: now,
        ...(local === undefined ? {} : { lease: { workerId: local.workerId } }),
      };
    });
    const inserted = new Set(await repo.insertJobs(db, rows));
    const kinds = new Set<string>();
    for (const row of rows) {
      const runner = runners.get(row.id);
      if (runner === undefined) {
        if (row.runAt <= now) kinds.add(row.kind);
      } else if (inserted.has(row.id)) {
        starting.set(runner, [...(starting.get(runner) ?? []), claimedAtBirth(row)]);
      }
    }
    for (const kind of kinds) await this.wakeAfterCommit(db, kind);
  }

  /** This process's worker starts the jobs of `kind` enqueued here, on commit; returns the undo. */
  runLocally(kind: string, runner: LocalRunner): () => void {
    this.localRunners.set(kind, runner);
    return () => {
      if (this.localRunners.get(kind) === runner) this.localRunners.delete(kind);
    };
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

  /** The workers listening for wakes on PostgreSQL, from any process, read now (none on SQLite). */
  async listeningWorkers(): Promise<string[]> {
    return (await this.targets?.read()) ?? [];
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
   * Wakes a worker for `kind` once `db`'s transaction (if any) commits: on PostgreSQL one listening worker
   * in turn (see `WakeTargets`), or every one with `everyone`.
   */
  async wakeAfterCommit(db: Executor, kind: string, { everyone = false } = {}): Promise<void> {
    if (this.postgres) {
      if (db.isTransaction) {
        const kinds = this.woken.get(db) ?? new Set<string>();
        if (kinds.has(kind)) return;
        this.woken.set(db, kinds.add(kind));
      }
      const target = everyone ? undefined : this.targets?.next();
      const payload = target === undefined ? kind : `${kind}>${target}`;
      await sql`select pg_notify(${JOBS_CHANNEL}, current_schema() || ':' || ${payload})`.execute(db);
    } else if (this.listeners.size > 0) {
      setImmediate(() => this.wakeLocal(kind));
    }
  }
}

function claimedAtBirth(row: repo.NewJob): repo.ClaimedJob {
  return {
    id: row.id,
    kind: row.kind,
    payload: row.payload,
    key: row.key,
    attempts: 1,
    max_attempts: row.maxAttempts,
    locked_by: row.lease?.workerId ?? null,
  };
}
