import type { Actor, AppContext, ServiceContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import { notFound } from '../../http/errors.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { NO_ITEMS } from '../../http/lists.js';
import { ownItemsListed } from '../orgs/service.js';
import { permissionsOf } from '../roles/catalog.js';
import { roleIdsOf } from '../users/repo.js';
import { fromKey, generateApiKey, hashApiKey } from './key-material.js';
import { transaction } from '../../db/transaction.js';
import * as repo from './repo.js';
import { announceRevocation } from './revocations.js';

export interface IssuedKey {
  id: string;
  name: string;
  prefix: string;
  created_at: number;
  key: string;
}

/** Resolves an `X-API-KEY` value to the caller, or undefined when it is unknown or revoked. */
export async function authenticate(ctx: AppContext, key: string): Promise<Actor | undefined> {
  const keyHash = hashApiKey(key);
  const now = ctx.clock.now();
  const cached = ctx.apiKeyCache.get(keyHash, now);
  if (cached !== undefined) return cached;
  const snapshot = ctx.apiKeyCache.snapshot();
  const owner = await repo.findActiveKeyOwner(ctx.db, keyHash);
  if (owner === undefined) return undefined;
  const roleIds = await roleIdsOf(ctx.db, owner.user_id);
  const actor: Actor = {
    userId: owner.user_id,
    name: owner.name,
    email: owner.email,
    orgId: owner.org_id,
    roleIds,
    permissions: permissionsOf(roleIds),
    apiKeyId: owner.key_id,
  };
  ctx.apiKeyCache.set(keyHash, actor, now, snapshot);
  return actor;
}

/** Issues a key for a user; `presetKey` is for BOOTSTRAP_API_KEY, where the operator chose the value. */
export async function issueApiKey(
  db: Executor,
  now: number,
  userId: string,
  name: string,
  presetKey?: string,
): Promise<IssuedKey> {
  const material = presetKey === undefined ? generateApiKey() : fromKey(presetKey);
  const row = { id: newId(now), user_id: userId, name, prefix: material.prefix, created_at: now };
  await repo.insertApiKey(db, { ...row, key_hash: material.hash });
  return { id: row.id, name, prefix: row.prefix, created_at: now, key: material.key };
}

export async function createOwnApiKey(ctx: ServiceContext, name: string | undefined): Promise<IssuedKey> {
  return issueApiKey(ctx.db, ctx.clock.now(), ctx.actor.userId, name ?? 'API key');
}

export async function listOwnApiKeys(
  ctx: ServiceContext,
  page: PageRequest,
  orgId?: string,
): Promise<Page<repo.ApiKeyRow>> {
  if (!(await ownItemsListed(ctx, orgId))) return NO_ITEMS;
  return repo.listActiveKeys(ctx.db, ctx.actor.userId, page);
}

export async function revokeOwnApiKey(ctx: ServiceContext, id: string): Promise<void> {
  if (!(await revokeKey(ctx, id))) throw notFound('API key');
}

/** Logging out: the key the request came with is revoked, wherever it was issued. */
export async function revokeCallersKey(ctx: ServiceContext): Promise<void> {
  // False only when a simultaneous request revoked it first: the caller is logged out either way.
  await revokeKey(ctx, ctx.actor.apiKeyId);
}

/** Revokes one of the caller's active keys, everywhere (revocations.ts); false when there was none. */
async function revokeKey(ctx: ServiceContext, id: string): Promise<boolean> {
  return transaction(ctx.db, async (trx) => {
    const keyHash = await repo.revokeActiveKeyOfUser(trx, id, ctx.actor.userId, ctx.clock.now());
    if (keyHash !== undefined) await announceRevocation(ctx, trx, { keyHash });
    return keyHash !== undefined;
  });
}
