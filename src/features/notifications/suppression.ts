import type { Executor } from '../../db/types.js';
import { nodeStatesBehind, type EventRow } from './repo.js';

/** The state of the node a change happened on and, for a tunnel, of the peer node it leads to. */
export interface StatesBehind {
  node: string | undefined;
  peer: string | null | undefined;
}

/** Why a notification was stored without being sent. */
export const NODE_UNREACHABLE = 'node_unreachable';

/**
 * Topology-aware suppression: whether a tunnel's or a service's change has an UNREACHABLE node behind it —
 * its own node, or for a tunnel the peer node it leads to. The node's own alert tells that root cause once;
 * the consequences are stored as suppressed rather than sent one by one.
 */
export async function nodeUnreachableBehind(
  db: Executor,
  event: EventRow,
  known?: StatesBehind,
): Promise<boolean> {
  if (event.resource_kind !== 'tunnel' && event.resource_kind !== 'service') return false;
  const states = known ?? (await nodeStatesBehind(db, event));
  return states.node === 'UNREACHABLE' || states.peer === 'UNREACHABLE';
}
