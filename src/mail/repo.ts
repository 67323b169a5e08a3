import type { EmailOutboxTable, Executor } from '../db/types.js';

export type OutboxRow = EmailOutboxTable;

export async function insertOutbox(db: Executor, row: OutboxRow): Promise<void> {
  await db.insertInto('email_outbox').values(row).execute();
}

export async function findOutbox(db: Executor, id: string): Promise<OutboxRow | undefined> {
  return db.selectFrom('email_outbox').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function markDone(
  db: Executor,
  id: string,
  status: 'sent' | 'logged',
  at: number,
): Promise<void> {
  await db
    .updateTable('email_outbox')
    .set((eb) => ({ status, sent_at: at, attempts: eb('attempts', '+', 1), last_error: null }))
    .where('id', '=', id)
    .execute();
}

/** A failed try: `pending` with the time of the next one, or `failed` when no try is left. */
export async function markFailed(
  db: Executor,
  id: string,
  error: string,
  status: 'pending' | 'failed',
  retryAt: number,
): Promise<void> {
  await db
    .updateTable('email_outbox')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), status, last_error: error, next_attempt_at: retryAt }))
    .where('id', '=', id)
    .execute();
}

/** The notification this e-mail carries, if any, takes the e-mail's outcome. */
export async function settleNotification(
  db: Executor,
  emailId: string,
  status: 'delivered' | 'failed',
): Promise<void> {
  await db.updateTable('notifications').set({ status }).where('email_id', '=', emailId).execute();
}

export async function listOutbox(db: Executor): Promise<OutboxRow[]> {
  return db.selectFrom('email_outbox').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** Removes finished messages (sent, logged or given up) created before `before`; returns how many. */
export async function pruneOutbox(db: Executor, before: number): Promise<number> {
  const result = await db
    .deleteFrom('email_outbox')
    .where('status', 'in', ['sent', 'logged', 'failed'])
    .where('created_at', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
