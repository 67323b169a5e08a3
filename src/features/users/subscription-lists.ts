import type { ServiceContext } from '../../context.js';
import type { PageRequest } from '../../http/lists.js';
import { subscriptionsVersion } from './repo.js';

/**
 * A user's webhook list or a page of their alerts (perhaps narrowed to an organization, which no change of
 * theirs can move in or out of), loaded once per change: the version read first is bumped in the
 * same transaction as every change to those lists, so the cached copy is never older than the last
 * committed change, in this process or another. Read before loading, a concurrent change can only
 * make the cached copy newer than its version, never older.
 */
export async function cachedSubscriptionList<T>(
  ctx: ServiceContext,
  kind: 'webhooks' | 'alerts',
  load: () => Promise<T>,
  page?: PageRequest,
  orgId?: string,
): Promise<T> {
  const version = await subscriptionsVersion(ctx.db, ctx.actor.userId);
  const paging = page === undefined ? '' : `:${page.page}:${page.size}`;
  const key = `${kind}:${ctx.actor.userId}${paging}${orgId === undefined ? '' : `:${orgId}`}`;
  const cached = ctx.listCache.get<T>(key, version);
  if (cached !== undefined) return cached;
  const value = await load();
  ctx.listCache.set(key, version, value);
  return value;
}
