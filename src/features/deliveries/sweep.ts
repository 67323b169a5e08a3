import type { AppContext } from '../../context.js';
import { databaseNow } from '../../db/now.js';
import { transaction } from '../../db/transaction.js';
import type { JobHandler } from '../../jobs/worker.js';
import { DELIVERIES_WAKE } from './dispatcher.js';
import * as repo from './repo.js';

export const STRANDED_SWEEP = 'deliveries.sweep';
export const STRANDED_SWEEP_EVERY_MS = 60_000;
const BATCH = 500;

/**
 * The safety net under the delivery rules: a pending delivery is always sent, held or expired. Any found
 * pending with nothing that would ever send it (no due time; a disabled webhook, whose disabling should
 * have held it) is logged, counted, and put back on its way: due now, or held. Returns how many.
 */
export async function sweepStranded(ctx: AppContext): Promise<number> {
  let found = 0;
  for (;;) {
    const batch = await transaction(ctx.db, async (trx) => {
      const stranded = await repo.findStranded(trx, databaseNow(trx, ctx.clock), BATCH);
      for (const delivery of stranded) {
        ctx.logger.error(
          { delivery: delivery.id, webhook: delivery.webhook_id, created_at: delivery.created_at },
          'a pending delivery had nothing to send it; sweeping it back on its way',
        );
      }
      const disabled = new Set(stranded.filter((d) => d.is_enabled !== 1).map((d) => d.webhook_id));
      for (const webhookId of disabled) await repo.holdPending(trx, webhookId);
      const undated = stranded.filter((d) => d.is_enabled === 1);
      await repo.makePending(trx, undated, ['pending'], ctx.jobs.now(trx));
      if (undated.length > 0) await ctx.jobs.wakeAfterCommit(trx, DELIVERIES_WAKE);
      return stranded.length;
    });
    found += batch;
    if (batch < BATCH) break;
  }
  ctx.alertMetrics.strandedFound(found);
  return found;
}

export function strandedSweepJob(ctx: AppContext): JobHandler<null> {
  return {
    kind: STRANDED_SWEEP,
    everyMs: STRANDED_SWEEP_EVERY_MS,
    async handle() {
      await sweepStranded(ctx);
    },
  };
}
