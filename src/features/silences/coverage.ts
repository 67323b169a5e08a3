import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { organizationChain } from '../notifications/org-chain.js';
import { matchingSnapshot } from '../notifications/matching-snapshot.js';
import { openOccurrence } from './occurrences.js';
import type { SilenceRow } from './repo.js';

/** What a window is matched against: where and what the change is. */
export interface Covered {
  org_id: string;
  node_id: string;
  type: string;
}

/**
 * Whether a window covers a change: open at `now`, on the change's organization (or one above it, with
 * include_child), on its node when the window names one, and on its type when the window lists types.
 */
export function covers(silence: SilenceRow, change: Covered, chainIds: readonly string[]): boolean {
  if (silence.org_id !== change.org_id && (silence.include_child !== 1 || !chainIds.includes(silence.org_id)))
    return false;
  if (silence.node_id !== null && silence.node_id !== change.node_id) return false;
  return silence.types === null || silence.types.split(',').includes(change.type);
}

/**
 * The open window that covers the change (the one that stays open longest), if any: a one-off window
 * between its start and end, a recurring one during one of its occurrences.
 */
export async function coveringSilence(
  ctx: AppContext,
  db: Executor,
  change: Covered,
  now: number,
): Promise<SilenceRow | undefined> {
  const { silences } = await matchingSnapshot(ctx, db);
  const open = silences.flatMap((silence) => {
    const occurrence = openOccurrence(silence, now);
    return occurrence === undefined ? [] : [{ silence, until: occurrence.end }];
  });
  if (open.length === 0) return undefined;
  const chainIds = (await organizationChain(ctx, db, change.org_id)).map((org) => org.id);
  return open.filter(({ silence }) => covers(silence, change, chainIds)).sort((a, b) => b.until - a.until)[0]
    ?.silence;
}
