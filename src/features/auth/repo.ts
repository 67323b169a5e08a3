import type { Executor } from '../../db/types.js';

/**
 * An attempt is written before it is checked against the limits and counted with them, so that
 * simultaneous requests see each other: a burst can never get more tries than the limit allows.
 */
export async function recordAttempt(
  db: Executor,
  row: { id: string; address: string; email_normalized: string; succeeded: number; at: number },
): Promise<void> {
  await db.insertInto('login_attempts').values(row).execute();
}

export async function markSucceeded(db: Executor, id: string): Promise<void> {
  await db.updateTable('login_attempts').set({ succeeded: 1 }).where('id', '=', id).execute();
}

/** Forgets an attempt the limits refused: a refused request is not a try and must not extend a lockout. */
export async function deleteAttempt(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('login_attempts').where('id', '=', id).execute();
}

/** Attempts in a window, oldest first; the limits need both the count and when the oldest leaves. */
async function attemptsSince(
  db: Executor,
  column: 'address' | 'email_normalized',
  value: string,
  since: number,
  failedOnly: boolean,
): Promise<{ count: number; oldest: number | null }> {
  let query = db
    .selectFrom('login_attempts')
    .select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.min('at').as('oldest')])
    .where(column, '=', value)
    .where('at', '>', since);
  if (failedOnly) query = query.where('succeeded', '=', 0);
  const row = await query.executeTakeFirstOrThrow();
  return { count: Number(row.count), oldest: row.oldest === null ? null : Number(row.oldest) };
}

export const requestsFromAddress = (db: Executor, address: string, since: number) =>
  attemptsSince(db, 'address', address, since, false);

export const failuresForAccount = (db: Executor, email: string, since: number) =>
  attemptsSince(db, 'email_normalized', email, since, true);

export async function pruneAttempts(db: Executor, before: number): Promise<void> {
  await db.deleteFrom('login_attempts').where('at', '<', before).execute();
}
