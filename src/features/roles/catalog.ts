/**
 * Built-in roles and what they allow. This table is the only place permissions are granted;
 * routes name the permission they need and the auth hook checks it.
 */
export const PERMISSIONS = [
  'roles:read',
  'users:create',
  // Seeing, editing and removing the users of the caller's organization and those below it.
  'users:manage',
  'orgs:read',
  'orgs:create',
  'apikeys:own',
  'profile:own',
  'alerts:read',
  'alerts:write',
  // Every notification of the caller's organization and those below it, not only their own.
  'org_notifications:read',
  'webhooks:read',
  'webhooks:write',
  'fleet:read',
  'fleet:write',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export interface RoleDefinition {
  id: string;
  name: string;
  permissions: readonly Permission[];
}

const READ_ONLY: readonly Permission[] = [
  'roles:read',
  'orgs:read',
  'apikeys:own',
  'profile:own',
  'alerts:read',
  'webhooks:read',
  'fleet:read',
];

export const ROLES: readonly RoleDefinition[] = [
  { id: 'admin', name: 'Admin', permissions: PERMISSIONS },
  {
    id: 'operator',
    name: 'Operator',
    permissions: [...READ_ONLY, 'alerts:write', 'org_notifications:read', 'webhooks:write', 'fleet:write'],
  },
  { id: 'read_only', name: 'Read Only', permissions: READ_ONLY },
];

const ROLES_BY_ID = new Map(ROLES.map((role) => [role.id, role]));

export function findRole(id: string): RoleDefinition | undefined {
  return ROLES_BY_ID.get(id);
}

export function permissionsOf(roleIds: readonly string[]): Set<Permission> {
  const granted = new Set<Permission>();
  for (const id of roleIds) for (const permission of findRole(id)?.permissions ?? []) granted.add(permission);
  return granted;
}
