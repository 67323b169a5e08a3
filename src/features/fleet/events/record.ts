import type { AppContext } from '../../../context.js';
import type { Executor } from '../../../db/types.js';
import type { Known } from '../../notifications/create.js';
import { notifyMatchingAlerts } from '../../notifications/matching.js';
import { insertEvents, type FleetEventRow } from './repo.js';

/**
 * Stores events in the transaction of the change they record, and in it matches them to alerts: the
 * notifications (or the checks that will make them) commit with the change, or nothing does.
 */
export async function recordEvents(
  ctx: AppContext,
  trx: Executor,
  events: readonly FleetEventRow[],
  known?: Known,
): Promise<void> {
  if (events.length === 0) return;
  await insertEvents(trx, events);
  ctx.alertMetrics.eventsRecorded(
    trx,
    events.map((event) => event.type),
  );
  await notifyMatchingAlerts(ctx, trx, events, known);
}
