import type { NotificationType, ResourceKind } from '../../notifications/types.js';

/** A change found in a report, before it is stored as an event (docs/rules/alerts-and-fleet.md#events). */
export interface Change {
  type: NotificationType;
  condition: string;
  resource: { kind: ResourceKind; id: string; name: string };
  previous: string | null;
  current: string;
}

export interface Address {
  type: 'InternalIP' | 'ExternalIP';
  address: string;
}

const IP_CONDITION = { InternalIP: 'PRIVATE_IP', ExternalIP: 'PUBLIC_IP' } as const;

/**
 * NODE_IP_CHANGE for each address type whose address differs from the stored one; nothing on the first
 * report of a type (no stored address to differ from). Pure.
 */
export function addressChanges(
  node: { id: string; name: string },
  stored: readonly Address[],
  reported: readonly Address[],
): Change[] {
  const changes: Change[] = [];
  for (const type of ['InternalIP', 'ExternalIP'] as const) {
    const before = stored.find((entry) => entry.type === type)?.address;
    const after = reported.find((entry) => entry.type === type)?.address;
    if (before === undefined || after === undefined || before === after) continue;
    changes.push({
      type: 'NODE_IP_CHANGE',
      condition: IP_CONDITION[type],
      resource: { kind: 'node', id: node.id, name: node.name },
      previous: before,
      current: after,
    });
  }
  return changes;
}

/** A tunnel or service as stored, and as reported; `peer` is a tunnel's peer node (services have none). */
export interface StoredResource {
  id: string;
  key: string;
  name: string;
  state: string;
  peer?: string | null;
}

export interface ReportedResource {
  key: string;
  name: string;
  state: string;
  peer?: string | null;
}

export interface ResourcePlan {
  /** Reported for the first time: inserted, with an event. */
  added: ReportedResource[];
  /** A different state: updated, with an event. */
  changed: { stored: StoredResource; reported: ReportedResource }[];
  /** The same state under a new name or with another peer: updated without an event. */
  updated: { stored: StoredResource; reported: ReportedResource }[];
}

/** What a report does to a node's tunnels or services; those it does not list are unchanged. Pure. */
export function planResources(
  stored: readonly StoredResource[],
  reported: readonly ReportedResource[],
): ResourcePlan {
  const byKey = new Map(stored.map((resource) => [resource.key, resource]));
  const plan: ResourcePlan = { added: [], changed: [], updated: [] };
  for (const resource of reported) {
    const known = byKey.get(resource.key);
    if (known === undefined) plan.added.push(resource);
    else if (known.state !== resource.state) plan.changed.push({ stored: known, reported: resource });
    else if (known.name !== resource.name || (known.peer ?? null) !== (resource.peer ?? null))
      plan.updated.push({ stored: known, reported: resource });
  }
  return plan;
}
