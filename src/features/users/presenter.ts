import { findRole } from '../roles/catalog.js';

export function roleRefs(roleIds: readonly string[]): { id: string; name: string }[] {
  return roleIds.map((id) => ({ id, name: findRole(id)?.name ?? id }));
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
