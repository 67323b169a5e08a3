import type { Executor } from '../../db/types.js';
import type { IncidentBody } from '../incidents/message-body.js';
import type { NotificationPayload } from './payload.js';
import { currentNames, type CurrentNames } from './repo.js';

export interface Named {
  id: string;
  name: string;
}

/** What a notification is about, by name: as its list item, its delivery log entries and the console show it. */
export interface NotificationContext {
  organization: Named;
  node: Named;
  /** The tunnel or service it is about; null when it is about the node itself. */
  resource: (Named & { kind: 'tunnel' | 'service' }) | null;
  /** The user whose alert it is. */
  owner: Named;
}

export interface NotificationFacts {
  user_id: string;
  org_id: string;
  node_id: string;
  /** An event's body, or an incident message's (about an organization or a node, not one resource). */
  payload: NotificationPayload | IncidentBody;
}

const resourceOf = (payload: NotificationFacts['payload']) =>
  payload.type === 'INCIDENT' ? undefined : payload.resource;

/**
 * Each notification's context with the names things have now (a renamed node shows its new name); a node,
 * tunnel or service that is gone keeps the last name it had, the one its notification's body was made with.
 */
export async function contextsOf(
  db: Executor,
  notifications: readonly NotificationFacts[],
): Promise<NotificationContext[]> {
  const resources = notifications.flatMap((notification) => resourceOf(notification.payload) ?? []);
  const names = await currentNames(db, {
    organizations: notifications.map((notification) => notification.org_id),
    nodes: notifications.map((notification) => notification.node_id),
    tunnels: resources.filter((resource) => resource.kind === 'tunnel').map((resource) => resource.id),
    services: resources.filter((resource) => resource.kind === 'service').map((resource) => resource.id),
    users: notifications.map((notification) => notification.user_id),
  });
  return notifications.map((notification) => contextOf(notification, names));
}

function contextOf({ user_id, org_id, node_id, payload }: NotificationFacts, names: CurrentNames) {
  const resource = resourceOf(payload);
  const nodeName = payload.type === 'INCIDENT' ? '' : payload.node.name;
  return {
    organization: { id: org_id, name: names.organizations.get(org_id) ?? payload.organization.name },
    node: { id: node_id, name: names.nodes.get(node_id) ?? nodeName },
    resource:
      resource === undefined || resource.kind === 'node'
        ? null
        : {
            kind: resource.kind,
            id: resource.id,
            name: names[`${resource.kind}s`].get(resource.id) ?? resource.name,
          },
    // A user's notifications go with the user: the owner is always there.
    owner: { id: user_id, name: names.users.get(user_id) ?? '' },
  };
}
