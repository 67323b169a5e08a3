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

export async function listVisibleOrgs(ctx: ServiceContext, page: PageRequest): Promise<Page<repo.OrgRow>> {
  return repo.listSubtree(ctx.db, ctx.actor.orgId, page);
}

export async function getVisibleOrg(ctx: ServiceContext, id: string): Promise<repo.OrgRow> {
  const org = await repo.findOrg(ctx.db, id);
  if (org === undefined || !(await repo.isInSubtree(ctx.db, ctx.actor.orgId, id)))
    throw notFound('Organization');
  return org;
}
