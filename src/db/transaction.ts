import type { Transaction } from 'kysely';
import type { Database, Db, Executor } from './types.js';

const commitHooks = new WeakMap<Executor, (() => void)[]>();

/**
 * Runs `work` in a transaction that can tell its callees when it has committed: what they register with
 * `afterCommit` runs right after the commit, and never when the transaction rolls back.
 */
export async function transaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = [];
  const result = await db.transaction().execute((trx) => {
    commitHooks.set(trx, hooks);
    return work(trx);
  });
  for (const hook of hooks) hook();
  return result;
}

/**
 * Registers `hook` to run once `db`'s transaction has committed. False (and nothing registered) when `db` is
 * not a transaction begun by `transaction()`: the caller then does without.
 */
export function afterCommit(db: Executor, hook: () => void): boolean {
  const hooks = commitHooks.get(db);
  if (hooks === undefined) return false;
  hooks.push(hook);
  return true;
}
