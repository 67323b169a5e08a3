import { sql } from 'kysely';
import { paginate } from '../../db/paginate.js';
import type { Executor, OrganizationsTable } from '../../db/types.js';
import type { Page, PageRequest } from '../../http/lists.js';

export type OrgRow = OrganizationsTable;

export async function insertOrg(db: Executor, org: OrgRow): Promise<void> {
  await db.insertInto('organizations').values(org).execute();
}

export async function findOrg(db: Executor, id: string): Promise<OrgRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countOrgs(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('organizations')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface MemberCounts {
  node_count: number;
  user_count: number;
}

/** How many nodes and users each organization has of its own (not those of the organizations below it). */
export async function memberCounts(
  db: Executor,
  orgIds: readonly string[],
): Promise<Map<string, MemberCounts>> {
  const counts = new Map<string, MemberCounts>(orgIds.map((id) => [id, { node_count: 0, user_count: 0 }]));
  if (orgIds.length === 0) return counts;
  const count = (table: 'nodes' | 'users') =>
    db
      .selectFrom(table)
      .select(['org_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('org_id', 'in', orgIds)
      .groupBy('org_id')
      .execute();
  const [nodes, users] = await Promise.all([count('nodes'), count('users')]);
  for (const row of nodes) counts.get(row.org_id)!.node_count = Number(row.n);
  for (const row of users) counts.get(row.org_id)!.user_count = Number(row.n);
  return counts;
}

/** A page of the organization and every organization below it, by creation (so the root comes first). */
export async function listSubtree(db: Executor, rootId: string, page: PageRequest): Promise<Page<OrgRow>> {
  const query = db
    .withRecursive('subtree(id)', (qb) =>
      qb
        .selectFrom('organizations')
        .select('id')
        .where('id', '=', rootId)
        .unionAll((sub) =>
          sub
            .selectFrom('organizations')
            .innerJoin('subtree', 'subtree.id', 'organizations.parent_id')
            .select('organizations.id'),
        ),
    )
    .selectFrom('organizations')
    .innerJoin('subtree', 'subtree.id', 'organizations.id')
    .selectAll('organizations')
    .orderBy('organizations.created_at')
    .orderBy('organizations.id');
  return paginate(db, query, page);
}

/** The ids of an organization and every organization below it, as a subquery for `where(column, 'in', …)`. */
export function subtreeIds(db: Executor, rootId: string) {
  return db
    .withRecursive('subtree(id)', (qb) =>
      qb
        .selectFrom('organizations')
        .select('id')
        .where('id', '=', rootId)
        .unionAll((sub) =>
          sub
            .selectFrom('organizations')
            .innerJoin('subtree', 'subtree.id', 'organizations.parent_id')
            .select('organizations.id'),
        ),
    )
    .selectFrom('subtree')
    .select('subtree.id');
}

/** Whether `orgId` is `ancestorId` or below it: walks up from `orgId`, which is short in a shallow tree. */
export async function isInSubtree(db: Executor, ancestorId: string, orgId: string): Promise<boolean> {
  const row = await db
    .withRecursive('ancestors(id, parent_id)', (qb) =>
      qb
        .selectFrom('organizations')
        .select(['id', 'parent_id'])
        .where('id', '=', orgId)
        .unionAll((sub) =>
          sub
            .selectFrom('organizations')
            .innerJoin('ancestors', 'ancestors.parent_id', 'organizations.id')
            .select(['organizations.id', 'organizations.parent_id']),
        ),
    )
    .selectFrom('ancestors')
    .select('id')
    .where('id', '=', ancestorId)
    .executeTakeFirst();
  return row !== undefined;
}

/** An organization and those above it, nearest first, with their names. */
export async function ancestry(db: Executor, orgId: string): Promise<{ id: string; name: string }[]> {
  const rows = await db
    .withRecursive('chain(id, name, parent_id, depth)', (qb) =>
      qb
        .selectFrom('organizations')
        .select(['id', 'name', 'parent_id', sql<number>`0`.as('depth')])
        .where('id', '=', orgId)
        .unionAll((sub) =>
          sub
            .selectFrom('organizations')
            .innerJoin('chain', 'chain.parent_id', 'organizations.id')
            .select([
              'organizations.id',
              'organizations.name',
              'organizations.parent_id',
              sql<number>`chain.depth + 1`.as('depth'),
            ]),
        ),
    )
    .selectFrom('chain')
    .select(['id', 'name'])
    .orderBy('depth')
    .execute();
  return rows;
}
