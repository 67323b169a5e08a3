import { isPostgres } from '../../db/connect.js';
import { likePattern } from '../../db/like.js';
import { paginate } from '../../db/paginate.js';
import type { Executor } from '../../db/types.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { sql } from 'kysely';
import { subtreeIds } from '../orgs/repo.js';

/** A user as the user directory shows them: with the organization's name. */
export interface DirectoryRow {
  id: string;
  name: string;
  email: string;
  org_id: string;
  org_name: string;
  email_verified_at: number | null;
  created_at: number;
}

export interface DirectoryFilters {
  /** The organization, and those below it. */
  underOrgId: string;
  /** Only this user (a caller who may see nobody else). */
  userId?: string;
  /** Part of the name or e-mail address, any case. */
  search?: string;
  roleId?: string;
}

function directoryQuery(db: Executor) {
  return db
    .selectFrom('users')
    .innerJoin('organizations', 'organizations.id', 'users.org_id')
    .select([
      'users.id',
      'users.name',
      'users.email',
      'users.org_id',
      'organizations.name as org_name',
      'users.email_verified_at',
      'users.created_at',
    ]);
}

/** A page of the users that match, oldest first. */
export async function listUsers(
  db: Executor,
  filters: DirectoryFilters,
  page: PageRequest,
): Promise<Page<DirectoryRow>> {
  let query = directoryQuery(db).where('users.org_id', 'in', subtreeIds(db, filters.underOrgId));
  if (filters.userId !== undefined) query = query.where('users.id', '=', filters.userId);
  if (filters.search !== undefined) {
    const pattern = likePattern(filters.search);
    query = query.where((eb) =>
      eb.or([eb(sql`lower(users.name)`, 'like', pattern), eb('users.email_normalized', 'like', pattern)]),
    );
  }
  const roleId = filters.roleId;
  if (roleId !== undefined) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('user_roles')
          .select('user_roles.user_id')
          .whereRef('user_roles.user_id', '=', 'users.id')
          .where('user_roles.role_id', '=', roleId),
      ),
    );
  }
  return paginate(db, query.orderBy('users.created_at').orderBy('users.id'), page);
}

export async function findDirectoryUser(db: Executor, id: string): Promise<DirectoryRow | undefined> {
  return directoryQuery(db).where('users.id', '=', id).executeTakeFirst();
}

/** The role ids of each user, in id order. */
export async function rolesOfUsers(db: Executor, userIds: readonly string[]): Promise<Map<string, string[]>> {
  const roles = new Map<string, string[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return roles;
  const rows = await db
    .selectFrom('user_roles')
    .select(['user_id', 'role_id'])
    .where('user_id', 'in', userIds)
    .orderBy('role_id')
    .execute();
  for (const row of rows) roles.get(row.user_id)?.push(row.role_id);
  return roles;
}

export interface Belongings {
  alerts: number;
  webhooks: number;
  channels: number;
}

/** What a user owns that goes with them. */
export async function belongingsOf(db: Executor, userId: string): Promise<Belongings> {
  const [alerts, endpoints] = await Promise.all([
    db
      .selectFrom('alerts')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('webhooks')
      .select(['kind', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('user_id', '=', userId)
      .groupBy('kind')
      .execute(),
  ]);
  const webhooks = endpoints.find((row) => row.kind === 'webhook');
  const channels = endpoints
    .filter((row) => row.kind !== 'webhook')
    .reduce((sum, row) => sum + Number(row.n), 0);
  return { alerts: Number(alerts.n), webhooks: Number(webhooks?.n ?? 0), channels };
}

/**
 * The Admins of the root organization (who alone see every user). Every user's Admin role is locked
 * (PostgreSQL) until the transaction ends: every change that may take the role from someone reads them this
 * way first, so two such changes at once see each other's outcome and cannot both take the last one.
 */
export async function lockAdmins(db: Executor): Promise<string[]> {
  let query = db.selectFrom('user_roles').select('user_id').where('role_id', '=', 'admin');
  if (isPostgres(db)) query = query.forUpdate();
  const admins = (await query.execute()).map((row) => row.user_id);
  if (admins.length === 0) return [];
  const rows = await db
    .selectFrom('users')
    .innerJoin('organizations', 'organizations.id', 'users.org_id')
    .select('users.id')
    .where('users.id', 'in', admins)
    .where('organizations.parent_id', 'is', null)
    .execute();
  return rows.map((row) => row.id);
}

export async function updateName(db: Executor, userId: string, name: string): Promise<void> {
  await db.updateTable('users').set({ name }).where('id', '=', userId).execute();
}

export async function replaceRoles(db: Executor, userId: string, roleIds: readonly string[]): Promise<void> {
  await db.deleteFrom('user_roles').where('user_id', '=', userId).execute();
  await db
    .insertInto('user_roles')
    .values(roleIds.map((role_id) => ({ user_id: userId, role_id })))
    .execute();
}

/**
 * Removes the user and, with them, what is theirs: keys, alerts, webhooks and channels, notifications and
 * their deliveries (the foreign keys cascade). False when the user was already gone.
 */
export async function deleteUser(db: Executor, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('users').where('id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
