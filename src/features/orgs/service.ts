import type { ServiceContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { newId } from '../../lib/ids.js';
import * as repo from './repo.js';

export async function createOrg(ctx: ServiceContext, input: { name: string; parent_id?: string }) {
  const parentId = input.parent_id ?? ctx.actor.orgId;
  if (!(await repo.isInSubtree(ctx.db, ctx.actor.orgId, parentId))) throw notFound('Parent organization');
  const now = ctx.clock.now();
  const org: repo.OrgRow = { id: newId(now), name: input.name, parent_id: parentId, created_at: now };
  await repo.insertOrg(ctx.db, org);
  return org;
}

export type CountedOrg = repo.OrgRow & repo.MemberCounts;

/** The caller's organization, or the one `org_id` names, and every organization below it. */
export async function listVisibleOrgs(
  ctx: ServiceContext,
  page: PageRequest,
  orgId?: string,
): Promise<Page<CountedOrg>> {
  const root = (await listedOrg(ctx, orgId)) ?? ctx.actor.orgId;
  const found = await repo.listSubtree(ctx.db, root, page);
  return { total_count: found.total_count, results: await withCounts(ctx, found.results) };
}

export async function getVisibleOrg(ctx: ServiceContext, id: string): Promise<CountedOrg> {
  const org = await repo.findOrg(ctx.db, id);
  if (org === undefined || !(await repo.isInSubtree(ctx.db, ctx.actor.orgId, id)))
    throw notFound('Organization');
  const [counted] = await withCounts(ctx, [org]);
  return counted!;
}

async function withCounts(ctx: ServiceContext, orgs: readonly repo.OrgRow[]): Promise<CountedOrg[]> {
  const counts = await repo.memberCounts(
    ctx.db,
    orgs.map((org) => org.id),
  );
  return orgs.map((org) => ({ ...org, ...(counts.get(org.id) ?? { node_count: 0, user_count: 0 }) }));
}

/**
 * The organization a list's `org_id` names, once it is known to be the caller's or one below it (else
 * 404); undefined when the list was not narrowed (docs/rules/api.md#list-scope).
 */
export async function listedOrg(ctx: ServiceContext, orgId: string | undefined): Promise<string | undefined> {
  if (orgId === undefined) return undefined;
  if (!(await repo.isInSubtree(ctx.db, ctx.actor.orgId, orgId))) throw notFound('Organization');
  return orgId;
}

/**
 * Whether the caller's own items (keys, webhooks, channels: they belong to the owner's organization) are in
 * a list narrowed to `org_id`: they are when it names the caller's organization, not when it names one
 * below it.
 */
export async function ownItemsListed(ctx: ServiceContext, orgId: string | undefined): Promise<boolean> {
  const listed = await listedOrg(ctx, orgId);
  return listed === undefined || listed === ctx.actor.orgId;
}
