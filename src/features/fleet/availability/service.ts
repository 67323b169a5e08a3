import type { ServiceContext } from '../../../context.js';
import { badRequest } from '../../../http/errors.js';
import { timeWindow } from '../../../http/time-window.js';
import type { NodeState } from '../../../db/types.js';
import { isoUtc } from '../../../lib/clock.js';
import { nextNodeStateChange, nodeStateChanges } from '../events/repo.js';
import { visibleNode } from '../nodes/service.js';
import { stateBands, uptimePercent } from './bands.js';

/** State changes one answer reads at most: a node flapping more than this asks for a shorter range. */
export const MAX_STATE_CHANGES = 10_000;
const DAY_MS = 86_400_000;

/**
 * A node's ALIVE / UNREACHABLE / NEW bands over a window, from its NODE_STATE_CHANGE events, and its uptime
 * (docs/rules/alerts-and-fleet.md#availability). What is known starts at the latest of `from`, the node's
 * registration and the retention horizon (older events are pruned), and ends at the earlier of `to` and now.
 * The state at the start is the one the next change left (its previous_state), else the node's state now.
 */
export async function nodeAvailability(
  ctx: ServiceContext,
  id: string,
  query: { from?: string; to?: string },
) {
  const now = ctx.clock.now();
  const window = timeWindow(query, now);
  const node = await visibleNode(ctx, ctx.db, id);
  const horizon = now - ctx.config.eventRetentionDays * DAY_MS;
  const known = {
    from: Math.max(window.from, Number(node.created_at), horizon),
    to: Math.min(window.to, now),
  };
  if (known.from >= known.to) return answer(window, null, []);
  const changes = await nodeStateChanges(ctx.db, node.id, known, MAX_STATE_CHANGES + 1);
  if (changes.length > MAX_STATE_CHANGES) {
    throw badRequest(
      `Invalid query string: the node changed state more than ${MAX_STATE_CHANGES.toLocaleString('en')} ` +
        'times between from and to; ask for a shorter range.',
      [{ field: 'from', message: 'too many state changes in the range' }],
    );
  }
  const next = changes[0] ?? (await nextNodeStateChange(ctx.db, node.id, known.to));
  const initial = next?.previous_state ?? node.node_state;
  return answer(window, known, stateBands(known, initial, changes));
}

function answer(
  window: { from: number; to: number },
  known: { from: number; to: number } | null,
  bands: ReturnType<typeof stateBands>,
) {
  return {
    from: isoUtc(window.from),
    to: isoUtc(window.to),
    known_from: known === null ? null : isoUtc(known.from),
    known_to: known === null ? null : isoUtc(known.to),
    uptime_percent: uptimePercent(bands),
    bands: bands.map((band) => ({
      state: band.state as NodeState,
      from: isoUtc(band.from),
      to: isoUtc(band.to),
    })),
  };
}
