import { sql } from 'kysely';
import type { AppContext } from '../../context.js';
import { isPostgres } from '../../db/connect.js';
import { listenOn, type Listener } from '../../db/listener.js';
import { afterCommit } from '../../db/transaction.js';
import type { Executor } from '../../db/types.js';
import type { ApiKeyCache } from './key-cache.js';

/** The PostgreSQL channel of revocations; the payload is `<schema>:key:<hash>` or `<schema>:user:<id>`. */
export const KEYS_CHANNEL = 'edgewatch_keys';

/** What stopped being valid: one key, or every key of a user (removed, or whose roles changed). */
export type Revoked = { keyHash: string } | { userId: string };

function forget(cache: ApiKeyCache, revoked: Revoked): void {
  if ('keyHash' in revoked) cache.invalidateKey(revoked.keyHash);
  else cache.invalidateUser(revoked.userId);
}

/**
 * Called in the transaction that revokes: this process forgets the key now and again after the commit (a
 * lookup in between may have read the row before it changed), and on PostgreSQL every other process
 * forgets it when the commit delivers the notification.
 */
export async function announceRevocation(ctx: AppContext, trx: Executor, revoked: Revoked): Promise<void> {
  forget(ctx.apiKeyCache, revoked);
  afterCommit(trx, () => forget(ctx.apiKeyCache, revoked));
  if (!isPostgres(trx)) return;
  const message = 'keyHash' in revoked ? `key:${revoked.keyHash}` : `user:${revoked.userId}`;
  await sql`select pg_notify(${KEYS_CHANNEL}, current_schema() || ':' || ${message})`.execute(trx);
}

/**
 * PostgreSQL: hears the other processes' revocations for as long as the API runs. The cache stays off
 * until the listener is up, and goes off again whenever it is down; SQLite has one process, and no listener.
 */
export async function hearRevocations(ctx: AppContext): Promise<Listener | undefined> {
  if (!isPostgres(ctx.db)) return undefined;
  const cache = ctx.apiKeyCache;
  cache.suspend();
  return listenOn(ctx.db, KEYS_CHANNEL, ctx.logger, {
    message(payload) {
      const at = payload.indexOf(':');
      const kind = payload.slice(0, at);
      const value = payload.slice(at + 1);
      if (kind === 'key') forget(cache, { keyHash: value });
      else if (kind === 'user') forget(cache, { userId: value });
    },
    listening: () => cache.resume(),
    lost: () => cache.suspend(),
  });
}
