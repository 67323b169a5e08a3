import type { AppContext } from '../../../context.js';
import { transaction } from '../../../db/transaction.js';
import type { JobHandler } from '../../../jobs/worker.js';
import { MINUTE_MS } from '../../../http/time-window.js';
import { countFleet, insertMinute } from './repo.js';

export const FLEET_SNAPSHOT = 'fleet.snapshot';

/** A test seam: runs between the count and its write, where a second snapshot of the minute may come. */
export interface SnapshotPauses {
  beforeWrite?: () => Promise<void>;
}

/**
 * Counts the fleet and stores it as the current minute's snapshot (docs/rules/alerts-and-fleet.md#fleet-history).
 * A minute is stored once: a second snapshot of it, from another worker or a retry, writes nothing. Whether
 * this call stored it.
 */
export async function takeSnapshot(ctx: AppContext, pauses: SnapshotPauses = {}): Promise<boolean> {
  const minute = Math.floor(ctx.clock.now() / MINUTE_MS) * MINUTE_MS;
  const counts = await countFleet(ctx.db);
  await pauses.beforeWrite?.();
  return transaction(ctx.db, (trx) => insertMinute(trx, minute, counts));
}

/** The snapshot as a periodic job: each minute, once whatever the number of workers. */
export function fleetSnapshotJob(ctx: AppContext): JobHandler<null> {
  return {
    kind: FLEET_SNAPSHOT,
    everyMs: MINUTE_MS,
    async handle() {
      await takeSnapshot(ctx);
    },
  };
}
