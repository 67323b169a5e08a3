import { AsyncLocalStorage } from 'node:async_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { CommitGroup } from '../src/db/commit-group.js';
import type { Logger } from 'pino';
import { afterCommit, logCommitHooksTo, transaction } from '../src/db/transaction.js';
import { sql } from 'kysely';
import type { Db, Executor } from '../src/db/types.js';
import { TickBatch } from '../src/lib/tick-batch.js';
import { listRuns, recordRun } from './support/jobs-tables.js';
import { dialect, jobsDatabaseOfFile } from './support/jobs-fixture.js';

let db: Db;
jobsDatabaseOfFile((opened) => (db = opened));

const run = (kind: string, n: number) => ({
  kind,
  job_id: `${kind}-${n}`,
  worker: 'test',
  attempt: n,
  at: n,
});

describe('afterCommit', () => {
  it('runs after the commit, and never after a rollback or outside transaction()', async () => {
    const seen: string[] = [];
    await transaction(db, async (trx) => {
      expect(afterCommit(trx, () => seen.push('committed'))).toBe(true);
      await recordRun(trx, run('hook', 1));
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(['committed']);

    await expect(
      transaction(db, async (trx) => {
        afterCommit(trx, () => seen.push('rolled back'));
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await db.transaction().execute(async (trx) => {
      expect(afterCommit(trx, () => seen.push('plain'))).toBe(false);
    });
    expect(afterCommit(db, () => seen.push('no transaction'))).toBe(false);
    expect(seen).toEqual(['committed']);
  });
});

describe('CommitGroup', () => {
  it("runs each unit in its caller's async context, though they share one transaction", async () => {
    const group = new CommitGroup(db, { open: 1, maxUnits: 64 });
    const caller = new AsyncLocalStorage<string>();
    const seen = await Promise.all(
      ['first', 'second', 'third'].map((name) =>
        caller.run(name, () =>
          group.run(async (trx) => {
            await recordRun(trx, run('context', name.length));
            return caller.getStore();
          }),
        ),
      ),
    );
    expect(seen).toEqual(['first', 'second', 'third']);
  });

  it('commits units that arrive together in one transaction, each resolving with its own result', async () => {
    const group = new CommitGroup(db, { open: 1, maxUnits: 64 });
    let transactions = 0;
    const units = Array.from({ length: 20 }, (_, n) =>
      group.run(async (trx) => {
        if (afterCommit(trx, () => undefined) && n === 0) transactions += 1;
        await recordRun(trx, run('group', n));
        return n * 2;
      }),
    );
    expect(await Promise.all(units)).toEqual(Array.from({ length: 20 }, (_, n) => n * 2));
    expect(await listRuns(db, 'group')).toHaveLength(20);
    expect(transactions).toBe(1);
  });

  it('gives a failing unit its own error, rolls back nothing of the others, and keeps nothing of it', async () => {
    const group = new CommitGroup(db, { open: 1, maxUnits: 64 });
    const attempts = new Map<number, number>();
    const units = Array.from({ length: 5 }, (_, n) =>
      group.run(async (trx) => {
        attempts.set(n, (attempts.get(n) ?? 0) + 1);
        await recordRun(trx, run('partial', n));
        if (n === 2) throw new Error(`unit ${n} is bad`);
        return n;
      }),
    );
    const settled = await Promise.allSettled(units);
    expect(settled.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect((settled[2] as PromiseRejectedResult).reason).toEqual(new Error('unit 2 is bad'));
    const stored = (await listRuns(db, 'partial')).map((r) => r.attempt).sort();
    expect(stored).toEqual([0, 1, 3, 4]);
    // The bad unit was rolled back to its savepoint; no unit ran twice.
    expect([...attempts.entries()].sort(([a], [b]) => a - b).map(([, count]) => count)).toEqual([
      1, 1, 1, 1, 1,
    ]);
  });

  it('undoes the after-commit hooks of a failing unit, and keeps the others', async () => {
    const group = new CommitGroup(db, { open: 1, maxUnits: 64 });
    const hooks: number[] = [];
    const units = [0, 1, 2].map((n) =>
      group.run(async (trx) => {
        afterCommit(trx, () => hooks.push(n));
        await recordRun(trx, run('hooks', n));
        if (n === 1) throw new Error('unit 1 is bad');
      }),
    );
    await Promise.allSettled(units);
    expect(hooks).toEqual([0, 2]);
  });

  it('logs an after-commit hook that throws, and neither runs a unit again nor fails the others', async () => {
    const logged: unknown[] = [];
    logCommitHooksTo(db, { error: (entry: unknown) => logged.push(entry) } as unknown as Logger);
    const group = new CommitGroup(db, { open: 1, maxUnits: 64 });
    const runs = new Map<number, number>();
    const units = [0, 1, 2].map((n) =>
      group.run(async (trx) => {
        runs.set(n, (runs.get(n) ?? 0) + 1);
        afterCommit(trx, () => {
          if (n === 0) throw new Error('hook failed');
        });
        await recordRun(trx, run('hook-throws', n));
        return n;
      }),
    );
    expect(await Promise.all(units)).toEqual([0, 1, 2]);
    expect([...runs.values()]).toEqual([1, 1, 1]);
    expect(logged).toHaveLength(1);
    expect((await listRuns(db, 'hook-throws')).map((r) => r.attempt).sort()).toEqual([0, 1, 2]);
  });

  it('runs a unit arriving alone at once, in a transaction of its own', async () => {
    const group = new CommitGroup(db, { open: 1, maxUnits: 64 });
    const result = await group.run(async (trx) => {
      await recordRun(trx, run('alone', 1));
      return 'done';
    });
    expect(result).toBe('done');
    expect((await listRuns(db, 'alone')).map((r) => r.job_id)).toEqual(['alone-1']);
  });
});

describe('TickBatch', () => {
  it('serves the items of one turn of the event loop with one call, each caller getting its result', async () => {
    const calls: number[][] = [];
    const batch = new TickBatch(
      async (items: number[]) => {
        calls.push(items);
        return items.map((n) => n * 10);
      },
      { maxItems: 3 },
    );
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => batch.add(n)));
    expect(results).toEqual([10, 20, 30, 40, 50]);
    expect(calls).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(await batch.add(6)).toBe(60);
    expect(calls).toHaveLength(3);
  });

  it('gives every caller of a failed batch its error', async () => {
    const batch = new TickBatch<number, number>(async () => {
      throw new Error('down');
    });
    const settled = await Promise.allSettled([batch.add(1), batch.add(2)]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
  });
});

// Two writers locking the same two rows in opposite orders: on PostgreSQL one is aborted to break the
// deadlock and must run again by itself; SQLite runs one transaction at a time, so none can happen there.
describe('a deadlock PostgreSQL breaks', () => {
  /** Resolves once both writers hold their first row (PostgreSQL); on SQLite, at once. */
  function meeting() {
    let arrived = 0;
    let open = () => {};
    const bothThere = new Promise<void>((resolve) => (open = resolve));
    return async () => {
      if (dialect === 'sqlite') return;
      arrived += 1;
      if (arrived === 2) open();
      await bothThere;
    };
  }

  const lockRow = (trx: Executor, kind: string) =>
    sql`update test_runs set worker = 'locked' where kind = ${kind}`.execute(trx);

  /** The work of a writer that locks `first`, meets the other, then locks `second`; counts its runs. */
  function crossing(first: string, second: string, meet: () => Promise<void>, runs: number[], k: number) {
    return async (trx: Executor) => {
      runs[k] = (runs[k] ?? 0) + 1;
      await lockRow(trx, first);
      await meet();
      await lockRow(trx, second);
      return k;
    };
  }

  beforeAll(async () => {
    for (const kind of ['cross-a', 'cross-b']) await recordRun(db, run(kind, 1));
  });

  it('runs the aborted transaction again: both commit', async () => {
    const meet = meeting();
    const runs: number[] = [];
    const done = await Promise.all([
      transaction(db, crossing('cross-a', 'cross-b', meet, runs, 0)),
      transaction(db, crossing('cross-b', 'cross-a', meet, runs, 1)),
    ]);
    expect(done).toEqual([0, 1]);
    expect(runs.reduce((a, b) => a + b)).toBe(dialect === 'postgres' ? 3 : 2);
  });

  it('runs the aborted unit of a group commit again in a later transaction: both commit', async () => {
    const meet = meeting();
    const runs: number[] = [];
    const groups = [0, 1].map(() => new CommitGroup(db, { open: 1, maxUnits: 64 }));
    // Each crossing unit shares its transaction with another, so it is rolled back to its savepoint alone.
    const company = (n: number) => (trx: Executor) => recordRun(trx, run('crossing-company', n));
    const done = await Promise.all([
      groups[0]!.run(company(1)),
      groups[0]!.run(crossing('cross-a', 'cross-b', meet, runs, 0)),
      groups[1]!.run(company(2)),
      groups[1]!.run(crossing('cross-b', 'cross-a', meet, runs, 1)),
    ]);
    expect([done[1], done[3]]).toEqual([0, 1]);
    expect(await listRuns(db, 'crossing-company')).toHaveLength(2);
    expect(runs.reduce((a, b) => a + b)).toBe(dialect === 'postgres' ? 3 : 2);
  });
});
