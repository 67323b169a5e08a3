import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { ancestry } from '../orgs/repo.js';

// Organizations are never moved, so a chain read once stays true for the life of the process.
const chains = new WeakMap<object, Map<string, { id: string; name: string }[]>>();

/** The event's organization and those above it, nearest first (cached per database). */
export async function organizationChain(ctx: AppContext, db: Executor, orgId: string) {
  let cache = chains.get(ctx.db);
  if (cache === undefined) {
    cache = new Map<string, { id: string; name: string }[]>();
    chains.set(ctx.db, cache);
  }
  let chain = cache.get(orgId);
  if (chain === undefined) {
    chain = await ancestry(db, orgId);
    if (chain.length > 0) cache.set(orgId, chain);
  }
  return chain;
}
