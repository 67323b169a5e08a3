import type { AppContext } from '../../context.js';
import { transaction } from '../../db/transaction.js';
import type { JobHandler } from '../../jobs/worker.js';
import { RetryJobAt } from '../../jobs/outcomes.js';
import { sendHeldBack } from '../notifications/create.js';
import { alertMatches } from '../notifications/matching.js';
import { currentSequence, findAlert, type EventRow } from '../notifications/repo.js';
import { findSilence, heldBy, type HeldNotification } from './repo.js';

export const SILENCE_END = 'silences.end';
export interface SilenceEnd {
  silenceId: string;
}

/**
 * What a window held back, per alert and resource: the first and the last change it saw. The last goes
 * out if the resource is still as it left it (its sequence unchanged since) and it differs from where
 * the first started: a node that went down and stayed down is told; one that came back is not.
 */
function stillHolding(held: HeldNotification[]): HeldNotification[] {
  const byAlertAndResource = new Map<string, HeldNotification[]>();
  for (const row of held) {
    const key = `${row.alert_id}/${row.resource_id}`;
    byAlertAndResource.set(key, [...(byAlertAndResource.get(key) ?? []), row]);
  }
  return [...byAlertAndResource.values()].flatMap((rows) => {
    const first = rows[0];
    const last = rows[rows.length - 1];
    return first === undefined || last === undefined || first.previous_state === last.current_state
      ? []
      : [last];
  });
}

const asEvent = (row: HeldNotification): EventRow => ({
  id: row.event_id,
  type: row.type,
  condition: row.condition,
  org_id: row.org_id,
  node_id: row.node_id,
  resource_kind: row.resource_kind,
  resource_id: row.resource_id,
  resource_name: row.resource_name,
  previous_state: row.previous_state,
  current_state: row.current_state,
  sequence: row.sequence,
  occurred_at: row.occurred_at,
  detected_at: row.detected_at,
});

/**
 * A maintenance window's end (at `ends_at`, or at once when it is ended early): each alert whose
 * notifications it held back, and whose condition still holds, gets one notification. The rest stay
 * suppressed, as the record of the work.
 */
export function silenceEndJob(ctx: AppContext): JobHandler<SilenceEnd> {
  return {
    kind: SILENCE_END,
    concurrency: 2,
    async handle({ silenceId }) {
      await transaction(ctx.db, async (trx) => {
        const silence = await findSilence(trx, silenceId);
        if (silence === undefined) return;
        if (silence.ends_at > ctx.clock.now()) {
          throw new RetryJobAt(silence.ends_at, 'the window has not ended yet');
        }
        let sent = 0;
        for (const row of stillHolding(await heldBy(trx, silenceId))) {
          const event = asEvent(row);
          const alert = await findAlert(trx, row.alert_id);
          if (alert === undefined || !alertMatches(alert, event)) continue;
          if ((await currentSequence(trx, event)) !== event.sequence) continue;
          if (await sendHeldBack(ctx, trx, row, alert, event)) sent += 1;
        }
        ctx.logger.info({ silence: silenceId, sent }, 'maintenance window ended');
      });
    },
  };
}
