import type { Executor } from '../../db/types.js';

/** The queries of e-mailed notifications: the owner's address, and which e-mail a notification went out in. */

export async function ownerEmail(db: Executor, userId: string): Promise<string> {
  const owner = await db
    .selectFrom('users')
    .select('email')
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  return owner.email;
}

export async function setNotificationEmail(
  db: Executor,
  notificationId: string,
  emailId: string,
): Promise<void> {
  await db.updateTable('notifications').set({ email_id: emailId }).where('id', '=', notificationId).execute();
}
