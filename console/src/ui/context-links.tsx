import type { NamedResource, Ref } from '../api/types';
import { href } from '../router';

/** A node by name, linking to its page. */
export function NodeLink({ node }: { node: Ref }) {
  return <a href={href(`/nodes/${node.id}`)}>{node.name}</a>;
}

/** An organization by name, linking to the Fleet page filtered to it (organizations have no page of their own). */
export function OrganizationLink({ organization }: { organization: Ref }) {
  return <a href={href('/fleet', { org: organization.id })}>{organization.name}</a>;
}

/** The node, with the tunnel or service on it when that is what a notification is about. */
export function Subject({ node, resource }: { node: Ref; resource: NamedResource }) {
  return (
    <>
      <NodeLink node={node} />
      {resource === null ? null : <span className="muted"> · {`${resource.kind} ${resource.name}`}</span>}
    </>
  );
}
