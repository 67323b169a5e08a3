import { paginate } from '../../db/paginate.js';
import type { Page, PageRequest } from '../../http/lists.js';
import type { Executor } from '../../db/types.js';

export interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string;
  prefix: string;
  created_at: number;
}

export async function insertApiKey(db: Executor, row: ApiKeyRow & { key_hash: string }): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({ ...row, revoked_at: null })
    .execute();
}

export async function findKeyByHash(db: Executor, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'user_id', 'revoked_at'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

export async function findActiveKeyOwner(db: Executor, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(['api_keys.id as key_id', 'users.id as user_id', 'users.name', 'users.email', 'users.org_id'])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function listActiveKeys(
  db: Executor,
  userId: string,
  page: PageRequest,
): Promise<Page<ApiKeyRow>> {
  const query = db
    .selectFrom('api_keys')
    .select(['id', 'user_id', 'name', 'prefix', 'created_at'])
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id');
  return paginate(db, query, page);
}

/**
 * Revokes one of the user's keys if it is still active and returns its hash (to drop it from the cache);
 * undefined when there was none: unknown, another user's, or already revoked (perhaps just now, by a
 * simultaneous request).
 */
export async function revokeActiveKeyOfUser(
  db: Executor,
  id: string,
  userId: string,
  at: number,
): Promise<string | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .returning('key_hash')
    .executeTakeFirst();
  return row?.key_hash;
}
