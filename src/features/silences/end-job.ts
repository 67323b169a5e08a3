import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { transaction } from '../../db/transaction.js';
import type { JobHandler } from '../../jobs/worker.js';
import { RetryJobAt } from '../../jobs/outcomes.js';
import { sendHeldBack } from '../notifications/create.js';
import { alertMatches } from '../notifications/matching.js';
import { currentSequence, findAlert, type EventRow } from '../notifications/repo.js';
import { currentOrNextOccurrence, openOccurrence } from './occurrences.js';
import { findSilence, heldBy, type HeldNotification, type SilenceRow } from './repo.js';

export const SILENCE_END = 'silences.end';
export interface SilenceEnd {
  silenceId: string;
  /**
   * A recurring window's: what it held back from then on is told at this occurrence's end. What it held
   * before was weighed at an earlier occurrence's end, and what it left suppressed then stays so.
   */
  since?: number;
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
 * Each alert whose notifications the window held back (made since `since`), and whose condition still
 * holds, is told once.
 */
async function tellHeldBack(ctx: AppContext, trx: Executor, silenceId: string, since?: number) {
  let sent = 0;
  for (const row of stillHolding(await heldBy(trx, silenceId, since))) {
    const event = asEvent(row);
    const alert = await findAlert(trx, row.alert_id);
    if (alert === undefined || !alertMatches(alert, event)) continue;
    if ((await currentSequence(trx, event)) !== event.sequence) continue;
    if (await sendHeldBack(ctx, trx, row, alert, event)) sent += 1;
  }
  return sent;
}

/**
 * A recurring window's occurrence is over: what it held back is told, and the job comes again at the next
 * occurrence's end. It is the one job of the window (its key), so running twice enqueues nothing more. An
 * occurrence still open (two that touch or overlap around a clock change are one stretch) moves it on.
 */
async function occurrenceEnd(ctx: AppContext, trx: Executor, silence: SilenceRow, since?: number) {
  const now = ctx.clock.now();
  const open = openOccurrence(silence, now);
  const next = open ?? currentOrNextOccurrence(silence, now);
  const sent = open === undefined ? await tellHeldBack(ctx, trx, silence.id, since) : 0;
  if (next !== undefined) {
    const again: SilenceEnd = { silenceId: silence.id, since: open === undefined ? now : since };
    await ctx.jobs.enqueue(trx, SILENCE_END, again, { key: silence.id, runAt: next.end });
  }
  if (open === undefined)
    ctx.logger.info({ silence: silence.id, sent }, 'maintenance window occurrence ended');
}

/**
 * A maintenance window's end (at `ends_at`, or at once when it is ended early; for a recurring window, at
 * each occurrence's end): each alert whose notifications it held back, and whose condition still holds,
 * gets one notification. The rest stay suppressed, as the record of the work.
 */
export function silenceEndJob(ctx: AppContext): JobHandler<SilenceEnd> {
  return {
    kind: SILENCE_END,
    concurrency: 2,
    async handle({ silenceId, since }) {
      await transaction(ctx.db, async (trx) => {
        const silence = await findSilence(trx, silenceId);
        if (silence === undefined) return;
        if (silence.recurrence !== null) return occurrenceEnd(ctx, trx, silence, since);
        if (silence.ends_at > ctx.clock.now()) {
          throw new RetryJobAt(silence.ends_at, 'the window has not ended yet');
        }
        const sent = await tellHeldBack(ctx, trx, silenceId);
        ctx.logger.info({ silence: silenceId, sent }, 'maintenance window ended');
      });
    },
  };
}
