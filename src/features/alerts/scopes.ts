import type { Executor } from '../../db/types.js';
import { badRequest, notFound } from '../../http/errors.js';
import { isInSubtree } from '../orgs/repo.js';
import type { NormalizedSettings } from './rules.js';

interface ScopedThing {
  field: 'node_id' | 'tunnel_id' | 'pod_id';
  what: string;
  nodeId: string;
  orgId: string;
}

async function nodeScope(db: Executor, id: string): Promise<ScopedThing | undefined> {
  const row = await db.selectFrom('nodes').select(['id', 'org_id']).where('id', '=', id).executeTakeFirst();
  return row && { field: 'node_id', what: 'Node settings.node_id', nodeId: row.id, orgId: row.org_id };
}

async function resourceScope(
  db: Executor,
  table: 'tunnels' | 'services',
  id: string,
): Promise<ScopedThing | undefined> {
  const row = await db
    .selectFrom(table)
    .innerJoin('nodes', 'nodes.id', `${table}.node_id`)
    .select(['nodes.id as node_id', 'nodes.org_id as org_id'])
    .where(`${table}.id`, '=', id)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return table === 'tunnels'
    ? { field: 'tunnel_id', what: 'Tunnel settings.tunnel_id', nodeId: row.node_id, orgId: row.org_id }
    : { field: 'pod_id', what: 'Service settings.pod_id', nodeId: row.node_id, orgId: row.org_id };
}

/**
 * Each scope (docs/rules/alerts-and-fleet.md#scopes) names something that exists and the caller may see (else
 * 404), inside the organizations the alert watches (else 400); a tunnel or service given with a node must be
 * on it.
 */
export async function checkScopes(
  db: Executor,
  actorOrgId: string,
  settings: NormalizedSettings,
): Promise<void> {
  const { nodeId, tunnelId, serviceId } = settings.scopes;
  const things = [
    nodeId === null ? null : ((await nodeScope(db, nodeId)) ?? 'Node settings.node_id'),
    tunnelId === null
      ? null
      : ((await resourceScope(db, 'tunnels', tunnelId)) ?? 'Tunnel settings.tunnel_id'),
    serviceId === null
      ? null
      : ((await resourceScope(db, 'services', serviceId)) ?? 'Service settings.pod_id'),
  ];
  for (const thing of things) {
    if (thing === null) continue;
    if (typeof thing === 'string' || !(await isInSubtree(db, actorOrgId, thing.orgId))) {
      throw notFound(typeof thing === 'string' ? thing : thing.what);
    }
    const watched =
      thing.orgId === settings.orgId ||
      (settings.includeChild && (await isInSubtree(db, settings.orgId, thing.orgId)));
    if (!watched) {
      throw badRequest(
        `Invalid settings: "settings.${thing.field}" is outside the organizations the alert watches (org_id` +
          `${settings.includeChild ? ' and below' : ''}).`,
        [{ field: `settings.${thing.field}`, message: 'is outside the scope of settings.org_id' }],
      );
    }
    if (nodeId !== null && thing.nodeId !== nodeId) {
      throw badRequest(
        `Invalid settings: "settings.${thing.field}" is not on the node settings.node_id names.`,
        [{ field: `settings.${thing.field}`, message: 'is not on the node of settings.node_id' }],
      );
    }
  }
}
