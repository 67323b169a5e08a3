import { isPostgres } from '../../db/connect.js';
import type { EmailDigestsTable, Executor } from '../../db/types.js';

/**
 * The queries of e-mailed notifications and their digests (storm control): a user's count for the
 * minute, the minute's digest, and which e-mail a notification went out in.
 */

/**
 * Serializes one user's e-mail counting on PostgreSQL (SQLite has one writer anyway), on the user's e-mail
 * channel row rather than the user's own, which the changes of the user's webhooks lock
 * (docs/deliveries.md#locks).
 */
export async function lockUserForEmail(db: Executor, userId: string): Promise<void> {
  if (!isPostgres(db)) return;
  await db.selectFrom('email_channels').select('id').where('user_id', '=', userId).forUpdate().execute();
}

/** The user's notifications made since `from` that went out by e-mail on their own. */
export async function sentAloneSince(db: Executor, userId: string, from: number): Promise<number> {
  const row = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('created_at', '>=', from)
    .where('email_id', 'is not', null)
    .where('digest_id', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function ownerEmail(db: Executor, userId: string): Promise<string> {
  const owner = await db
    .selectFrom('users')
    .select('email')
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  return owner.email;
}

/**
 * The user's digest of the minute starting at `windowStart`, made with `id` unless it exists already, and
 * locked until the transaction ends (PostgreSQL; on SQLite the transaction has the database to itself).
 */
export async function lockDigestOfMinute(
  db: Executor,
  digest: Pick<EmailDigestsTable, 'id' | 'user_id' | 'window_start' | 'created_at'>,
): Promise<EmailDigestsTable> {
  await db
    .insertInto('email_digests')
    .values({ ...digest, email_id: null })
    .onConflict((oc) => oc.columns(['user_id', 'window_start']).doNothing())
    .execute();
  let query = db
    .selectFrom('email_digests')
    .selectAll()
    .where('user_id', '=', digest.user_id)
    .where('window_start', '=', digest.window_start);
  if (isPostgres(db)) query = query.forUpdate();
  return query.executeTakeFirstOrThrow();
}

/** The digest, locked until the transaction ends (PostgreSQL), as `lockDigestOfMinute` locks it. */
export async function lockDigest(db: Executor, id: string): Promise<EmailDigestsTable | undefined> {
  let query = db.selectFrom('email_digests').selectAll().where('id', '=', id);
  if (isPostgres(db)) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** The notifications a digest took, oldest first. */
export async function takenByDigest(db: Executor, digestId: string) {
  return db
    .selectFrom('notifications')
    .select(['id', 'payload'])
    .where('digest_id', '=', digestId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function putInDigest(db: Executor, notificationId: string, digestId: string): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ digest_id: digestId })
    .where('id', '=', notificationId)
    .execute();
}

export async function setNotificationEmail(
  db: Executor,
  notificationId: string,
  emailId: string,
): Promise<void> {
  await db.updateTable('notifications').set({ email_id: emailId }).where('id', '=', notificationId).execute();
}

/** The digest's e-mail, named by the digest and by every notification it took. */
export async function setDigestEmail(db: Executor, digestId: string, emailId: string): Promise<void> {
  await db.updateTable('email_digests').set({ email_id: emailId }).where('id', '=', digestId).execute();
  await db
    .updateTable('notifications')
    .set({ email_id: emailId })
    .where('digest_id', '=', digestId)
    .execute();
}
