import type { Transaction } from 'kysely';
import { transaction } from './transaction.js';
import type { Database, Db } from './types.js';

type Work<T> = (trx: Transaction<Database>) => Promise<T>;

interface Unit {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
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
 * Units run one after the other in the shared transaction, and each resolves only once it has committed. If
 * any unit fails, the transaction rolls back and every unit of it runs again in a transaction of its own, so
 * a unit sees its own error only and the others' work is not lost. Units must therefore be safe to run twice
 * (they are database work, re-read what they need, and register what follows a commit with `afterCommit`).
 */
export class CommitGroup {
  private readonly waiting: Unit[] = [];
  private running = 0;
  private pumpScheduled = false;

  constructor(
    private readonly db: Db,
    private readonly options: CommitGroupOptions,
  ) {}

  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve, reject });
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
    let results: unknown[];
    try {
      results = await transaction(this.db, async (trx) => {
        const done: unknown[] = [];
        for (const unit of units) done.push(await unit.work(trx));
        return done;
      });
    } catch {
      for (const unit of units) await this.alone(unit);
      return;
    }
    units.forEach((unit, k) => unit.resolve(results[k]));
  }

  private async alone(unit: Unit): Promise<void> {
    try {
      unit.resolve(await transaction(this.db, unit.work));
    } catch (error) {
      unit.reject(error);
    }
  }
}
