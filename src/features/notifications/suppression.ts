import type { Executor } from '../../db/types.js';
import type { EventRow } from './repo.js';

/** Why a notification was stored without being sent. */
export const NODE_UNREACHABLE = 'node_unreachable';

/**
 * Topology-aware suppression: whether a tunnel's or a service's change has an UNREACHABLE node behind it —
 * its own node, or for a tunnel the peer node it leads to. The node's own alert tells that root cause once;
 * the consequences are stored as suppressed rather than sent one by one.
 */
export async function nodeUnreachableBehind(db: Executor, event: EventRow): Promise<boolean> {
  if (event.resource_kind === 'tunnel') {
    const row = await db
      .selectFrom('tunnels')
      .innerJoin('nodes', 'nodes.id', 'tunnels.node_id')
      .leftJoin('nodes as peer', 'peer.id', 'tunnels.peer_node_id')
      .select(['nodes.node_state as node_state', 'peer.node_state as peer_state'])
      .where('tunnels.id', '=', event.resource_id)
      .executeTakeFirst();
    return row?.node_state === 'UNREACHABLE' || row?.peer_state === 'UNREACHABLE';
  }
  if (event.resource_kind === 'service') {
    const node = await db
      .selectFrom('nodes')
      .select('node_state')
      .where('id', '=', event.node_id)
      .executeTakeFirst();
    return node?.node_state === 'UNREACHABLE';
  }
  return false;
}
