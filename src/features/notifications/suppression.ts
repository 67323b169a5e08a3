import type { Executor } from '../../db/types.js';
import { nodeStatesBehind, type EventRow } from './repo.js';

/** Why a notification was stored without being sent. */
export const NODE_UNREACHABLE = 'node_unreachable';

/**
 * Topology-aware suppression: whether a tunnel's or a service's change has an UNREACHABLE node behind it —
 * its own node, or for a tunnel the peer node it leads to. The node's own alert tells that root cause once;
 * the consequences are stored as suppressed rather than sent one by one.
 */
export async function nodeUnreachableBehind(db: Executor, event: EventRow): Promise<boolean> {
  if (event.resource_kind !== 'tunnel' && event.resource_kind !== 'service') return false;
  const states = await nodeStatesBehind(db, event);
  return states.node === 'UNREACHABLE' || states.peer === 'UNREACHABLE';
}
