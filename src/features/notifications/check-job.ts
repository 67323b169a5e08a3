import type { AppContext } from '../../context.js';
import type { JobHandler } from '../../jobs/worker.js';
import { createNotification } from './create.js';
import { ALERT_CHECK, alertMatches, type AlertCheck } from './matching.js';
import { findEvent } from '../fleet/events/repo.js';
import { currentSequence, findAlert } from './repo.js';
import { transaction } from '../../db/transaction.js';

/**
 * An alert with a duration, checked `duration` minutes after its event: it notifies only if the
 * resource is unchanged since (its sequence is the event's), so a shorter flap sends nothing. The alert
 * is read again (it may have been edited or deleted), and a second run finds the notification made.
 */
export function alertCheckJob(ctx: AppContext): JobHandler<AlertCheck> {
  return {
    kind: ALERT_CHECK,
    concurrency: 8,
    async handle(check) {
      await transaction(ctx.db, async (trx) => {
        const [alert, event] = await Promise.all([
          findAlert(trx, check.alertId),
          findEvent(trx, check.eventId),
        ]);
        if (alert === undefined || event === undefined || !alertMatches(alert, event)) return;
        if ((await currentSequence(trx, event)) !== event.sequence) return;
        await createNotification(ctx, trx, alert, event);
      });
    },
  };
}
