import type { ServiceContext } from '../../context.js';
import { transaction } from '../../db/transaction.js';
import type { Executor } from '../../db/types.js';
import { badRequest, conflict, forbidden, notFound } from '../../http/errors.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { isoUtc } from '../../lib/clock.js';
import { announceRevocation } from '../apikeys/revocations.js';
import { isInSubtree } from '../orgs/repo.js';
import { listedOrg } from '../orgs/service.js';
import { findRole } from '../roles/catalog.js';
import { normalizeEmail, roleRefs } from './presenter.js';
import * as repo from './directory-repo.js';
import { touchSubscriptions } from './repo.js';

/**
 * The user directory (docs/rules/users.md): an Admin sees, edits and removes the users of their
 * organization and those below it; everyone else sees only themselves, and may change only their own name.
 */

export interface UserListQuery {
  org_id?: string;
  search?: string;
  role?: string;
}

export interface UserEdit {
  name?: string | null;
  roles?: string[] | null;
  password?: string | null;
  email?: string | null;
}

/** Test seams at the racy points of an edit of roles or a removal; production passes none. */
export interface AdminSeams {
  /** Awaited once the Admins are read (and locked), before anything depends on them. */
  afterReadingAdmins?: () => Promise<void>;
}

function present(row: repo.DirectoryRow, roleIds: readonly string[]) {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    username: row.email,
    org_id: row.org_id,
    organization: { id: row.org_id, name: row.org_name },
    roles: roleRefs(roleIds),
    email_verified: row.email_verified_at !== null,
    created_at: isoUtc(row.created_at),
  };
}

export type UserJson = ReturnType<typeof present>;

const mayManage = (ctx: ServiceContext) => ctx.actor.permissions.has('users:manage');

export async function listUsers(
  ctx: ServiceContext,
  query: UserListQuery,
  page: PageRequest,
): Promise<Page<UserJson>> {
  const underOrgId = (await listedOrg(ctx, query.org_id)) ?? ctx.actor.orgId;
  const found = await repo.listUsers(
    ctx.db,
    {
      underOrgId,
      ...(mayManage(ctx) ? {} : { userId: ctx.actor.userId }),
      ...(query.search === undefined ? {} : { search: query.search }),
      ...(query.role === undefined ? {} : { roleId: query.role }),
    },
    page,
  );
  const roles = await repo.rolesOfUsers(
    ctx.db,
    found.results.map((row) => row.id),
  );
  return {
    total_count: found.total_count,
    results: found.results.map((row) => present(row, roles.get(row.id) ?? [])),
  };
}

/** A user the caller may see: themselves, or for an Admin one of their organizations' (else 404). */
async function visibleUser(ctx: ServiceContext, db: Executor, id: string): Promise<repo.DirectoryRow> {
  const row = await repo.findDirectoryUser(db, id);
  const visible =
    row !== undefined &&
    (row.id === ctx.actor.userId || (mayManage(ctx) && (await isInSubtree(db, ctx.actor.orgId, row.org_id))));
  if (!visible) throw notFound('User');
  return row;
}

async function presentOne(db: Executor, row: repo.DirectoryRow): Promise<UserJson> {
  const roles = await repo.rolesOfUsers(db, [row.id]);
  return present(row, roles.get(row.id) ?? []);
}

/** One user, with what they own (what removing them with force=true would remove). */
export async function getUser(ctx: ServiceContext, id: string) {
  const row = await visibleUser(ctx, ctx.db, id);
  return { ...(await presentOne(ctx.db, row)), owns: await repo.belongingsOf(ctx.db, id) };
}

function lastAdmin(): never {
  throw conflict(
    'This is the last Admin of the root organization: give another user there the Admin role first.',
  );
}

/**
 * Changes a user's name or roles. As the published client sends them, an empty string, an empty list or
 * null leaves a field unchanged; passwords and e-mail addresses are not changed here.
 */
export async function editUser(
  ctx: ServiceContext,
  id: string,
  edit: UserEdit,
  seams: AdminSeams = {},
): Promise<UserJson> {
  const name = edit.name === null || edit.name === '' ? undefined : edit.name;
  if (name?.trim() === '') {
    throw badRequest('A name cannot be blank.', [{ field: 'name', message: 'is blank' }]);
  }
  const roles =
    edit.roles === null || edit.roles === undefined || edit.roles.length === 0
      ? undefined
      : [...new Set(edit.roles)];
  if (edit.password !== undefined && edit.password !== null && edit.password !== '') {
    throw badRequest('A password is changed by its owner, at login (new_password), not here.', [
      { field: 'password', message: 'cannot be changed here' },
    ]);
  }
  if (roles !== undefined) {
    if (!mayManage(ctx))
      throw forbidden('Only an Admin changes roles (it needs the "users:manage" permission).');
    const unknown = roles.filter((role) => findRole(role) === undefined);
    if (unknown.length > 0) {
      throw badRequest(
        `Unknown role id: ${unknown.join(', ')}. List the roles with GET /api/v2/role.`,
        unknown.map((role) => ({ field: 'roles', message: `"${role}" is not a role id` })),
      );
    }
  }
  return transaction(ctx.db, async (trx) => {
    const rootAdmins = roles === undefined ? [] : await repo.lockAdmins(trx);
    if (roles !== undefined) await seams.afterReadingAdmins?.();
    const row = await visibleUser(ctx, trx, id);
    if (nonEmpty(edit.email) && normalizeEmail(edit.email) !== normalizeEmail(row.email)) {
      throw badRequest('An e-mail address cannot be changed: add a user with the new address instead.', [
        { field: 'email', message: 'cannot be changed' },
      ]);
    }
    if (name === undefined && roles === undefined)
      throw badRequest('Nothing to change: send a name or roles.');
    if (roles !== undefined && !roles.includes('admin') && rootAdmins.length === 1 && rootAdmins[0] === id) {
      lastAdmin();
    }
    if (name !== undefined) await repo.updateName(trx, id, name);
    if (roles !== undefined) await repo.replaceRoles(trx, id, roles);
    // The user's keys carry their name and roles: every process reads them again.
    await announceRevocation(ctx, trx, { userId: id });
    return presentOne(trx, { ...row, name: name ?? row.name });
  });
}

function nonEmpty(value: string | null | undefined): value is string {
  return value !== undefined && value !== null && value !== '';
}

/**
 * Removes a user with their keys (which stop working at once, in every process). One who still owns
 * alerts, webhooks or channels stays (409 naming them) unless `force`, which removes those too. Nobody
 * removes themselves, and the root organization keeps an Admin.
 */
export async function removeUser(ctx: ServiceContext, id: string, force: boolean, seams: AdminSeams = {}) {
  if (id === ctx.actor.userId) throw conflict('You cannot remove yourself: another Admin can.');
  const removed = await transaction(ctx.db, async (trx) => {
    const rootAdmins = await repo.lockAdmins(trx);
    await seams.afterReadingAdmins?.();
    await visibleUser(ctx, trx, id);
    if (rootAdmins.length === 1 && rootAdmins[0] === id) lastAdmin();
    // The lock every change of the user's alerts, webhooks and channels takes first: none is added meanwhile.
    await touchSubscriptions(trx, id);
    const owns = await repo.belongingsOf(trx, id);
    if (!force && owns.alerts + owns.webhooks + owns.channels > 0) {
      throw conflict(
        `The user still owns ${plural(owns.alerts, 'alert')}, ${plural(owns.webhooks, 'webhook')} and ` +
          `${plural(owns.channels, 'channel')}: remove them first, or repeat with ?force=true to remove them too.`,
        Object.entries(owns).map(([field, count]) => ({ field, message: `${count} owned` })),
      );
    }
    if (!(await repo.deleteUser(trx, id))) throw notFound('User');
    await announceRevocation(ctx, trx, { userId: id });
    return owns;
  });
  return { id, status: 'SUCCESS' as const, message: 'The user has been removed.', removed };
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
