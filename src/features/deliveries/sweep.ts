import type { AppContext } from '../../context.js';
import { databaseNow } from '../../db/now.js';
import { transaction } from '../../db/transaction.js';
import type { Executor } from '../../db/types.js';
import type { JobHandler } from '../../jobs/worker.js';
import * as repo from './repo.js';
import { requeueDeliveries } from './start.js';

export const STRANDED_SWEEP = 'deliveries.sweep';
export const STRANDED_SWEEP_EVERY_MS = 60_000;

/** Test seams at the racy points of a sweep; production passes none. */
export interface SweepSeams {
  /** The webhooks with stranded deliveries have been read, none locked yet. */
  afterFinding?: () => Promise<void>;
  /** A webhook is locked and its stranded deliveries read; nothing is written yet. */
  beforeWriting?: (trx: Executor) => Promise<void>;
}

/**
 * The safety net under the delivery rules (docs/deliveries.md): a pending delivery is always sent, held or
 * expired. Any delivery found with no way forward (pending with no due time, pending at a disabled
 * webhook, held at an enabled one) is logged, counted, and put back on its way: due now, or held, as its
 * webhook is when the sweep holds its lock. Returns how many it found.
 */
export async function sweepStranded(ctx: AppContext, seams: SweepSeams = {}): Promise<number> {
  const webhookIds = await repo.webhooksWithStranded(ctx.db, databaseNow(ctx.db, ctx.clock));
  await seams.afterFinding?.();
  let found = 0;
  for (const webhookId of webhookIds) {
    found += await transaction(ctx.db, (trx) => sweepWebhook(ctx, trx, webhookId, seams));
  }
  ctx.alertMetrics.strandedFound(found);
  return found;
}

/**
 * One webhook's stranded deliveries, read and moved under its lock (the lock every writer of its
 * deliveries takes first), so what is decided is what its webhook is until this commits.
 */
async function sweepWebhook(
  ctx: AppContext,
  trx: Executor,
  webhookId: string,
  seams: SweepSeams,
): Promise<number> {
  const webhook = await repo.lockWebhook(trx, webhookId);
  if (webhook === undefined) return 0;
  const stranded = await repo.strandedOf(trx, webhookId, databaseNow(trx, ctx.clock));
  await seams.beforeWriting?.(trx);
  for (const delivery of stranded) {
    ctx.logger.error(
      { delivery: delivery.id, webhook: webhookId, status: delivery.status, created_at: delivery.created_at },
      'a delivery had no way forward; the sweep put it back on its way',
    );
  }
  if (stranded.length === 0) return 0;
  if (webhook.is_enabled === 1) await requeueDeliveries(ctx, trx, stranded, ['pending', 'held']);
  else await repo.holdPending(trx, webhookId);
  return stranded.length;
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
