import { isPostgres } from '../../db/connect.js';
import type { CompiledQuery, Insertable, Selectable } from 'kysely';
import { idleSqlite } from '../../db/connect.js';
import type { Executor, UsersTable } from '../../db/types.js';

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;

export async function insertUser(
  db: Executor,
  user: NewUserRow & { id: string },
  roleIds: readonly string[],
): Promise<void> {
  await db.insertInto('users').values(user).execute();
  if (roleIds.length > 0) {
    await db
      .insertInto('user_roles')
      .values(roleIds.map((role_id) => ({ user_id: user.id, role_id })))
      .execute();
  }
}

/**
 * Marks a change to the user's webhooks or alerts. Every such change calls it first in its
 * transaction: the update takes the user's row lock (PostgreSQL) or the write lock (SQLite), which
 * serializes per-user limit checks, and the new version invalidates cached lists in every process.
 */
/**
 * Locks a user's row as `touchSubscriptions` does, without moving the version (PostgreSQL; SQLite has one
 * writer): for work that may touch it later and must take it first (docs/deliveries.md#locks).
 */
export async function lockUser(db: Executor, userId: string): Promise<void> {
  if (isPostgres(db))
    await db.selectFrom('users').select('id').where('id', '=', userId).forNoKeyUpdate().execute();
}

export async function touchSubscriptions(db: Executor, userId: string): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ subscriptions_version: eb('subscriptions_version', '+', 1) }))
    .where('id', '=', userId)
    .execute();
}

// Read before every list answer, so it is kept cheap: compiled once per database handle, and on the
// embedded database run synchronously whenever its connection is idle.
const versionQueries = new WeakMap<Executor, CompiledQuery<{ subscriptions_version: number }>>();
const versionStatements = new WeakMap<object, { get(userId: string): unknown }>();

export async function subscriptionsVersion(db: Executor, userId: string): Promise<number> {
  const sqlite = idleSqlite(db);
  if (sqlite !== undefined) {
    let statement = versionStatements.get(sqlite);
    if (statement === undefined) {
      statement = sqlite.prepare('select subscriptions_version from users where id = ?').pluck();
      versionStatements.set(sqlite, statement);
    }
    return (statement.get(userId) as number | undefined) ?? -1;
  }
  let compiled = versionQueries.get(db);
  if (compiled === undefined) {
    compiled = db.selectFrom('users').select('subscriptions_version').where('id', '=', '').compile();
    versionQueries.set(db, compiled);
  }
  const query: CompiledQuery<{ subscriptions_version: number }> = { ...compiled, parameters: [userId] };
  const { rows } = await db.executeQuery(query);
  return rows[0]?.subscriptions_version ?? -1;
}

export async function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserByEmail(db: Executor, emailNormalized: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('email_normalized', '=', emailNormalized)
    .executeTakeFirst();
}

export async function roleIdsOf(db: Executor, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('user_roles')
    .select('role_id')
    .where('user_id', '=', userId)
    .orderBy('role_id')
    .execute();
  return rows.map((row) => row.role_id);
}

export async function findFirstAdmin(db: Executor): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .innerJoin('user_roles', 'user_roles.user_id', 'users.id')
    .selectAll('users')
    .where('user_roles.role_id', '=', 'admin')
    .orderBy('users.created_at')
    .orderBy('users.id')
    .executeTakeFirst();
}

/**
 * Replaces the password the caller checked, and clears the first-login flag; false when the row no longer
 * holds that hash, i.e. another change came first (the checked password is no longer current).
 */
export async function replacePassword(
  db: Executor,
  userId: string,
  checkedHash: string,
  newHash: string,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: newHash, password_change_required: 0 })
    .where('id', '=', userId)
    .where('password_hash', '=', checkedHash)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function markEmailVerified(db: Executor, userId: string, at: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ email_verified_at: at })
    .where('id', '=', userId)
    .where('email_verified_at', 'is', null)
    .execute();
}

export async function insertVerificationToken(
  db: Executor,
  row: { token_hash: string; user_id: string; expires_at: number },
): Promise<void> {
  await db
    .insertInto('email_verifications')
    .values({ ...row, used_at: null })
    .execute();
}

export async function findVerificationToken(db: Executor, tokenHash: string) {
  return db
    .selectFrom('email_verifications')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Marks a token used; false when another request used it first (single use under concurrency). */
export async function consumeVerificationToken(
  db: Executor,
  tokenHash: string,
  at: number,
): Promise<boolean> {
  const result = await db
    .updateTable('email_verifications')
    .set({ used_at: at })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
