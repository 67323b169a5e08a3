import { CompiledQuery, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import { isTransientConflict } from './connect.js';
import type { Database, Db, Executor } from './types.js';

/** A hook to run after the commit; `key`, when given, names it so that a transaction registers it once. */
interface CommitHook {
  key?: string;
  run: () => void;
}

const commitHooks = new WeakMap<Executor, CommitHook[]>();
const hookLoggers = new WeakMap<Db, Logger>();

/** Where a throwing `afterCommit` hook of this database's transactions is logged. */
export function logCommitHooksTo(db: Db, logger: Logger): void {
  hookLoggers.set(db, logger);
}

/** Times a transaction is run when PostgreSQL keeps aborting it to resolve a conflict. */
export const CONFLICT_TRIES = 5;

/** A short, random pause before running again what a conflict aborted, so the two do not meet again. */
export function conflictPause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 45));
}

/**
 * Runs `work` in a transaction that can tell its callees when it has committed: what they register with
 * `afterCommit` runs right after the commit, and never when the transaction rolls back. A hook that
 * throws is logged and changes nothing else: the transaction has committed, and its caller learns that.
 *
 * A transaction PostgreSQL aborts to break a deadlock wrote nothing, and is run again (up to
 * CONFLICT_TRIES times): `work` must do database work only, as every transaction here does.
 */
export async function transaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries += 1) {
    const hooks: CommitHook[] = [];
    let result: T;
    try {
      result = await db.transaction().execute((trx) => {
        commitHooks.set(trx, hooks);
        return work(trx);
      });
    } catch (error) {
      if (tries >= CONFLICT_TRIES || !isTransientConflict(error)) throw error;
      await conflictPause();
      continue;
    }
    for (const hook of hooks) {
      try {
        hook.run();
      } catch (error) {
        hookLoggers.get(db)?.error({ err: error }, 'an after-commit hook failed');
      }
    }
    return result;
  }
}

/** Whether `db` is a transaction begun by `transaction()`, whose callees can run hooks after its commit. */
export function hasCommitHooks(db: Executor): boolean {
  return commitHooks.has(db);
}

/**
 * Registers `hook` to run once `db`'s transaction has committed. False (and nothing registered) when `db` is
 * not a transaction begun by `transaction()`: the caller then does without.
 */
export function afterCommit(db: Executor, hook: () => void): boolean {
  const hooks = commitHooks.get(db);
  if (hooks === undefined) return false;
  hooks.push({ run: hook });
  return true;
}

/**
 * `afterCommit` for a hook the transaction needs once: 'registered' when this call registered it,
 * 'already' when a live part of the transaction did (one rolled back to its savepoint took its hook with
 * it), 'unavailable' when `db` is not a transaction begun by `transaction()`.
 */
export function afterCommitOnce(
  db: Executor,
  key: string,
  hook: () => void,
): 'registered' | 'already' | 'unavailable' {
  const hooks = commitHooks.get(db);
  if (hooks === undefined) return 'unavailable';
  if (hooks.some((registered) => registered.key === key)) return 'already';
  hooks.push({ key, run: hook });
  return 'registered';
}

const SAVEPOINT = CompiledQuery.raw('savepoint unit');
const ROLLBACK_TO_SAVEPOINT = CompiledQuery.raw('rollback to savepoint unit');
const RELEASE_SAVEPOINT = CompiledQuery.raw('release savepoint unit');

/**
 * Runs `work` inside a savepoint of `trx`: if it throws, its writes and the hooks it registered are undone
 * and the transaction goes on without them. The savepoint is released at once: each one left open makes
 * every later write of the transaction slower (SQLite checks each page it writes against every open
 * savepoint; PostgreSQL walks the open ones to tell its own rows).
 */
export async function inSavepoint<T>(trx: Transaction<Database>, work: () => Promise<T>): Promise<T> {
  const hooks = commitHooks.get(trx);
  const registered = hooks?.length ?? 0;
  await trx.executeQuery(SAVEPOINT);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await trx.executeQuery(ROLLBACK_TO_SAVEPOINT);
    hooks?.splice(registered);
    throw error;
  }
  await trx.executeQuery(RELEASE_SAVEPOINT);
  return result;
}
