import type { Logger } from 'pino';
import { isPostgres } from '../db/connect.js';
import { databaseNow } from '../db/now.js';
import type { Db } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { listenOn, type Listener } from '../db/listener.js';
import { JOBS_CHANNEL } from './queue.js';
import type { JobMetrics } from './metrics.js';
import { PermanentJobFailure, RetryJobAt } from './outcomes.js';
import type { JobQueue } from './queue.js';
import * as repo from './repo.js';

/** What a handler knows of the run it is in. */
export interface JobRun {
  id: string;
  key: string | null;
  /** 1 for the first run, 2 for the first retry, ... */
  attempt: number;
  maxAttempts: number;
  /** Aborted when the worker stops and the run has outlived the shutdown deadline. */
  signal: AbortSignal;
}

/**
 * The code that runs jobs of one kind. Runs are at-least-once: a worker that dies mid-run leaves a lease
 * that expires, and the job runs again, so every handler must be safe to run twice.
 */
export interface JobHandler<P = never> {
  kind: string;
  /** Resolves when the run succeeded. */
  handle(payload: P, run: JobRun): Promise<void>;
  /** Runs of this kind at once in one worker process (default 1). */
  concurrency?: number;
  /** How long a run may take before another worker may take the job (default: the worker's). */
  leaseMs?: number;
  backoff?: BackoffPolicy;
  /**
   * A periodic task instead of enqueued jobs: one job of this kind exists (key `every`), runs at each
   * tick of this interval, whatever the number of worker processes, and is never dead.
   */
  everyMs?: number;
}

export interface WorkerOptions {
  db: Db;
  queue: JobQueue;
  clock: Clock;
  logger: Logger;
  handlers: readonly JobHandler<never>[];
  /** The safety-net poll; enqueues wake idle workers at once. */
  pollMs: number;
  leaseMs: number;
  metrics?: JobMetrics;
}

/** The key of the one job of a periodic kind. */
export const PERIODIC_KEY = 'every';
const MAX_ERROR_LENGTH = 2_000;

/** The next tick of an interval: aligned on the epoch, so every process computes the same one. */
export function nextTick(now: number, everyMs: number): number {
  return Math.floor(now / everyMs) * everyMs + everyMs;
}

interface InFlight {
  job: repo.ClaimedJob;
  done: Promise<void>;
  abort: AbortController;
}

/**
 * Claims and runs the jobs of one kind, never more at once than its concurrency: only this loop starts
 * runs, and it claims at most the slots free when it claims.
 */
class KindRunner {
  readonly inFlight = new Map<string, InFlight>();
  private wakeRequested = true;
  private wakeUp: (() => void) | undefined;
  private stopping = false;
  loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly worker: Worker,
    readonly handler: JobHandler<never>,
  ) {}

  get concurrency(): number {
    return this.handler.concurrency ?? 1;
  }

  start(): void {
    this.loop = this.run();
  }

  wake(): void {
    this.wakeRequested = true;
    this.wakeUp?.();
  }

  stop(): void {
    this.stopping = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const free = this.concurrency - this.inFlight.size;
      if (free <= 0 || !this.wakeRequested) {
        await this.sleep();
        continue;
      }
      this.wakeRequested = false;
      const claimed = await this.worker.claim(this.handler, free);
      for (const job of claimed) this.launch(job);
      // A full batch may have left more due jobs behind: look again at once.
      if (claimed.length === free) this.wakeRequested = true;
    }
  }

  /** Until a wake (an enqueue, the worker's poll finding due jobs, stop) or a freed slot. */
  private async sleep(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.wakeUp = resolve;
    });
    this.wakeUp = undefined;
  }

  private launch(job: repo.ClaimedJob): void {
    const abort = new AbortController();
    const done = this.worker.execute(this.handler, job, abort.signal).finally(() => {
      this.inFlight.delete(job.id);
      // A slot is free: claim again at once if jobs may be waiting, else wait for a wake or the poll.
      if (this.wakeRequested) this.wakeUp?.();
    });
    this.inFlight.set(job.id, { job, done, abort });
  }
}

/**
 * The consuming side of the queue: one loop per kind claims due jobs in batches under a lease, runs them,
 * removes the ones that succeeded (in batches) and reschedules the ones that failed, with backoff, until
 * they are dead. On PostgreSQL, claims lock with SKIP LOCKED, so any number of workers share the work.
 */
export class Worker {
  readonly id = `worker-${newId().slice(-12)}`;
  readonly pollMs: number;
  readonly leaseMs: number;
  private readonly runners = new Map<string, KindRunner>();
  private listener: Listener | undefined;
  private stopWake: (() => void) | undefined;
  private finished: string[] = [];
  private flushScheduled = false;
  private lastFlush: Promise<void> = Promise.resolve();
  private stopped: Promise<void> | undefined;
  private polling: Promise<void> = Promise.resolve();
  private pollingStopped = false;
  private stopPolling: (() => void) | undefined;

  constructor(private readonly options: WorkerOptions) {
    this.pollMs = options.pollMs;
    this.leaseMs = options.leaseMs;
    for (const handler of options.handlers) {
      if (this.runners.has(handler.kind)) throw new Error(`two handlers for job kind ${handler.kind}`);
      this.runners.set(handler.kind, new KindRunner(this, handler));
    }
  }

  async start(): Promise<void> {
    const { db, queue, clock } = this.options;
    const periodic = [...this.runners.values()].filter((runner) => runner.handler.everyMs !== undefined);
    await queue.ensurePeriodic(
      db,
      periodic.map((runner) => runner.handler.kind),
      PERIODIC_KEY,
      clock.now(),
    );
    this.stopWake = queue.onWake((kind) => this.runners.get(kind)?.wake());
    if (isPostgres(db)) {
      // Until a lost connection is back, the poll finds the jobs.
      this.listener = await listenOn(db, JOBS_CHANNEL, this.options.logger, {
        message: (message) => queue.heard(message),
      });
    }
    for (const runner of this.runners.values()) runner.start();
    this.polling = this.poll();
    this.options.logger.info({ worker: this.id, kinds: [...this.runners.keys()] }, 'job worker started');
  }

  /**
   * Stops claiming, lets running jobs finish until the deadline, then gives the leases of the others
   * back (due at once, so another worker takes them without waiting for the lease to run out).
   */
  stop(timeoutMs = 10_000): Promise<void> {
    this.stopped ??= this.shutdown(timeoutMs);
    return this.stopped;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    this.stopPolling?.();
    await this.polling;
    this.stopWake?.();
    await this.listener?.close();
    for (const runner of this.runners.values()) runner.stop();
    await Promise.all([...this.runners.values()].map((runner) => runner.loop));
    const running = () => [...this.runners.values()].flatMap((runner) => [...runner.inFlight.values()]);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all(running().map((entry) => entry.done)), deadline]);
    clearTimeout(timer);
    const left = running();
    for (const entry of left) entry.abort.abort();
    const unfinished = left.map((entry) => entry.job);
    if (unfinished.length > 0) {
      await this.release(unfinished);
      this.options.logger.warn({ worker: this.id, released: unfinished.length }, 'job leases given back');
    }
    await this.lastFlush;
    await this.flush();
  }

  /**
   * The safety net under the wakes: every `pollMs`, one query asks which kinds have jobs due (a lost
   * notification, a retry or a scheduled job whose time came, a dead worker's lease run out), and wakes
   * their runners.
   */
  private async poll(): Promise<void> {
    const kinds = [...this.runners.keys()];
    while (!this.pollingStopped) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        this.stopPolling = () => {
          this.pollingStopped = true;
          clearTimeout(timer);
          resolve();
        };
      });
      if (this.pollingStopped) return;
      try {
        const due = await repo.kindsWithDueJobs(
          this.options.db,
          kinds,
          databaseNow(this.options.db, this.options.clock),
        );
        for (const kind of due) this.runners.get(kind)?.wake();
      } catch (error) {
        this.options.logger.error({ err: error, worker: this.id }, 'looking for due jobs failed');
      }
    }
  }

  now(): number {
    return this.options.clock.now();
  }

  /** Gives claimed jobs back, due at once, and wakes the other workers rather than leave them to their poll. */
  async release(jobs: readonly repo.ClaimedJob[]): Promise<void> {
    await this.write(() => repo.releaseJobs(this.options.db, jobs, this.now()));
    for (const kind of new Set(jobs.map((job) => job.kind))) {
      await this.write(() => this.options.queue.wakeAfterCommit(this.options.db, kind));
    }
  }

  /**
   * Runs the jobs due now in this call, batch after batch until none is due, without starting the
   * loops: for a one-off command, and for tests that move a clock. Returns how many runs there were.
   */
  async runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      let ran = 0;
      for (const runner of this.runners.values()) {
        const claimed = await this.claim(runner.handler, runner.concurrency);
        const signal = new AbortController().signal;
        await Promise.all(claimed.map((job) => this.execute(runner.handler, job, signal)));
        ran += claimed.length;
      }
      await this.lastFlush;
      await this.flush();
      if (ran === 0) return total;
      total += ran;
    }
  }

  /** Leases up to `limit` due jobs of the handler's kind; a failed claim is logged and waits for the poll. */
  async claim(handler: JobHandler<never>, limit: number): Promise<repo.ClaimedJob[]> {
    const { db, clock } = this.options;
    try {
      return await repo.claimDue(db, {
        kind: handler.kind,
        now: databaseNow(db, clock),
        leaseMs: handler.leaseMs ?? this.leaseMs,
        limit,
        workerId: this.id,
      });
    } catch (error) {
      this.options.logger.error({ err: error, kind: handler.kind }, 'claiming jobs failed');
      return [];
    }
  }

  async execute(handler: JobHandler<never>, job: repo.ClaimedJob, signal: AbortSignal): Promise<void> {
    const started = performance.now();
    let outcome: 'succeeded' | 'retried' | 'dead';
    try {
      const payload = JSON.parse(job.payload) as never;
      await handler.handle(payload, {
        id: job.id,
        key: job.key,
        attempt: job.attempts,
        maxAttempts: job.max_attempts,
        signal,
      });
      outcome = 'succeeded';
      await this.succeeded(handler, job);
    } catch (error) {
      outcome = await this.failed(handler, job, error);
    }
    this.options.metrics?.observeRun(handler.kind, outcome, (performance.now() - started) / 1000);
  }

  private async succeeded(handler: JobHandler<never>, job: repo.ClaimedJob): Promise<void> {
    if (handler.everyMs === undefined) {
      this.finished.push(job.id);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        this.lastFlush = new Promise((resolve) => setImmediate(resolve)).then(() => this.flush());
      }
      return;
    }
    const runAt = nextTick(this.options.clock.now(), handler.everyMs);
    await this.write(() =>
      repo.rescheduleJob(this.options.db, job, { runAt, lastError: null, resetAttempts: true }),
    );
  }

  /** Removes the jobs that succeeded since the last flush, in one statement. */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const ids = this.finished;
    this.finished = [];
    await this.write(() => repo.deleteJobs(this.options.db, ids));
  }

  private async failed(
    handler: JobHandler<never>,
    job: repo.ClaimedJob,
    error: unknown,
  ): Promise<'retried' | 'dead'> {
    const { db, clock, logger } = this.options;
    const message = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
    const context = { worker: this.id, kind: handler.kind, job: job.id, attempt: job.attempts, err: message };
    const now = clock.now();
    if (handler.everyMs !== undefined) {
      logger.error(context, 'periodic job failed; it runs again at the next tick');
      const runAt = nextTick(now, handler.everyMs);
      await this.write(() => repo.rescheduleJob(db, job, { runAt, lastError: message, resetAttempts: true }));
      return 'retried';
    }
    if (error instanceof PermanentJobFailure || job.attempts >= job.max_attempts) {
      logger.error(context, 'job failed for good; kept as dead');
      await this.write(() => repo.markDead(db, job, message));
      return 'dead';
    }
    const runAt =
      error instanceof RetryJobAt
        ? error.runAt
        : now + backoffDelay(job.attempts, handler.backoff ?? DEFAULT_BACKOFF);
    logger.warn({ ...context, retry_at: new Date(runAt).toISOString() }, 'job failed; will retry');
    await this.write(() => repo.rescheduleJob(db, job, { runAt, lastError: message }));
    return 'retried';
  }

  /** A write after a run: if it fails, the lease runs out and the job runs again (at-least-once). */
  private async write(action: () => Promise<void>): Promise<void> {
    try {
      await action();
    } catch (error) {
      this.options.logger.error({ err: error, worker: this.id }, 'recording a job outcome failed');
    }
  }
}
