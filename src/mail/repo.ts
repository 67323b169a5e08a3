import type { EmailOutboxTable, Executor } from '../db/types.js';

export type OutboxRow = EmailOutboxTable;

export async function insertOutbox(db: Executor, row: OutboxRow): Promise<void> {
  await db.insertInto('email_outbox').values(row).execute();
}

export async function listDue(db: Executor, now: number, limit: number): Promise<OutboxRow[]> {
  return db
    .selectFrom('email_outbox')
    .selectAll()
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
}

/**
 * Takes a message for one sender by pushing its next attempt past a lease; the compare on the old
 * value makes the claim atomic on both databases, so two processes never send the same message.
 */
export async function claim(db: Executor, row: OutboxRow, leaseUntil: number): Promise<boolean> {
  const result = await db
    .updateTable('email_outbox')
    .set({ next_attempt_at: leaseUntil })
    .where('id', '=', row.id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '=', row.next_attempt_at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
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

export async function markFailed(db: Executor, id: string, error: string, retryAt: number): Promise<void> {
  await db
    .updateTable('email_outbox')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), last_error: error, next_attempt_at: retryAt }))
    .where('id', '=', id)
    .execute();
}

export async function listOutbox(db: Executor): Promise<OutboxRow[]> {
  return db.selectFrom('email_outbox').selectAll().orderBy('created_at').orderBy('id').execute();
}
