import type { AppContext } from '../../context.js';
import { pruneDead } from '../../jobs/repo.js';
import type { JobHandler } from '../../jobs/worker.js';
import { pruneOutbox } from '../../mail/repo.js';
import { expireAllHeld } from '../deliveries/release.js';
import { pruneEvents } from '../fleet/events/repo.js';
import { pruneFleetHistory } from '../fleet/history/repo.js';
import { pruneNotifications } from '../notifications/repo.js';
import { clearExpiredPreviousSecrets } from '../webhooks/repo.js';

export const PRUNE_RETENTION = 'retention.prune';
const HOUR_MS = 3_600_000;

/**
 * Hourly, whatever the number of workers: records older than EVENT_RETENTION_DAYS go (finished e-mails, dead
 * jobs, fleet events, notifications with their deliveries), and held notifications past their limits expire
 * (docs/rules/webhooks.md#held-notifications); the fleet's per-minute counts go after
 * FLEET_HISTORY_RETENTION_DAYS; rotated-out webhook secrets past their overlap are erased
 * (docs/rules/webhooks.md#secret-rotation). Idempotent, so a tick that runs twice after a crash does no
 * harm.
 */
export function pruneRetentionJob(ctx: AppContext): JobHandler<null> {
  return {
    kind: PRUNE_RETENTION,
    everyMs: HOUR_MS,
    async handle() {
      const before = ctx.clock.now() - ctx.config.eventRetentionDays * 24 * HOUR_MS;
      const emails = await pruneOutbox(ctx.db, before);
      const deadJobs = await pruneDead(ctx.db, before);
      const events = await pruneEvents(ctx.db, before);
      const notifications = await pruneNotifications(ctx.db, before);
      const history = await pruneFleetHistory(
        ctx.db,
        ctx.clock.now() - ctx.config.fleetHistoryRetentionDays * 24 * HOUR_MS,
      );
      const expired = await expireAllHeld(ctx.db, ctx.clock.now());
      await clearExpiredPreviousSecrets(ctx.db, ctx.clock.now());
      ctx.alertMetrics.notificationsEntered(ctx.db, 'expired', 'held_too_long', expired);
      if (emails + deadJobs + events + notifications + history > 0) {
        ctx.logger.info(
          { emails, deadJobs, events, notifications, history },
          'pruned records past retention',
        );
      }
    },
  };
}
