import { AsyncResource } from 'node:async_hooks';
import type { Transaction } from 'kysely';
import { isTransientConflict } from './connect.js';
import { CONFLICT_TRIES, conflictPause, inSavepoint, transaction } from './transaction.js';
import type { Database, Db } from './types.js';

type Work<T> = (trx: Transaction<Database>) => Promise<T>;

interface Unit {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Times it ran and was rolled back by a conflict PostgreSQL broke (a deadlock). */
  conflicts: number;
}

export interface CommitGroupOptions {
  /** Shared transactions open at once: 1 on SQLite (one writer), a few on PostgreSQL. */
  open: number;
  /** Units in one transaction at most. */
  maxUnits: number;
}

/**
 * Group commit for small, frequent transactions (an agent's report, a delivery's outcome): a unit of work
 * starts in this turn of the event loop when a transaction slot is free, and otherwise waits and shares the
 * next transaction with every unit that arrived meanwhile. A commit costs far more than a unit's statements (on SQLite, writing the
 * pages of every table and index it touched), so under load one commit serves many units; when idle, a unit
 * waits for nobody.
 *
 * Units run one after the other in the shared transaction, each in a savepoint of its own, and each
 * resolves only once it has committed. A unit that fails is rolled back to its savepoint (its writes and
 * its `afterCommit` hooks gone) and sees its own error; the others go on and commit. A unit rolled back
 * because PostgreSQL broke a deadlock it was in wrote nothing, and waits for a later transaction (up to
 * CONFLICT_TRIES times); no unit ever runs again once its work has committed. Should the commit itself
 * fail, every unit of it sees that error.
 */
export class CommitGroup {
  private readonly waiting: Unit[] = [];
  private running = 0;
  private pumpScheduled = false;

  constructor(
    private readonly db: Db,
    private readonly options: CommitGroupOptions,
  ) {}

  /** `work` runs in its caller's async context (its trace span, say), as if the caller had run it. */
  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work: AsyncResource.bind(work), resolve, reject, conflicts: 0 });
      this.schedulePump();
    });
  }

  /**
   * A transaction on SQLite runs start to end without yielding to I/O, so requests that arrived together
   * are read first (the rest of this turn of the event loop) and then share one.
   */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.options.open && this.waiting.length > 0) {
      const units = this.waiting.splice(0, this.options.maxUnits);
      this.running += 1;
      void this.commit(units).finally(() => {
        this.running -= 1;
        if (this.waiting.length > 0) this.schedulePump();
      });
    }
  }

  private async commit(units: Unit[]): Promise<void> {
    if (units.length === 1) return this.alone(units[0] as Unit);
    type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
    let outcomes: Outcome[];
    try {
      outcomes = await transaction(this.db, async (trx) => {
        const done: Outcome[] = [];
        for (const unit of units) {
          try {
            done.push({ ok: true, value: await inSavepoint(trx, () => unit.work(trx)) });
          } catch (error) {
            done.push({ ok: false, error });
          }
        }
        return done;
      });
    } catch (error) {
      for (const unit of units) this.failed(unit, error);
      return;
    }
    units.forEach((unit, k) => {
      const outcome = outcomes[k] as Outcome;
      if (outcome.ok) unit.resolve(outcome.value);
      else this.failed(unit, outcome.error);
    });
  }

  /** A unit that wrote nothing: run again later when a conflict was the cause, else told why. */
  private failed(unit: Unit, error: unknown): void {
    unit.conflicts += 1;
    if (!isTransientConflict(error) || unit.conflicts >= CONFLICT_TRIES) {
      unit.reject(error);
      return;
    }
    void conflictPause().then(() => {
      this.waiting.push(unit);
      this.schedulePump();
    });
  }

  private async alone(unit: Unit): Promise<void> {
    try {
      unit.resolve(await transaction(this.db, unit.work));
    } catch (error) {
      unit.reject(error);
    }
  }
}
