import type { ServiceContext } from '../../context.js';
import type { NotificationStatus } from '../../db/types.js';
import { steppedWindow } from '../../http/time-window.js';
import { isoUtc } from '../../lib/clock.js';
import { whoseNotifications } from './service.js';
import { countsByStep, deliveryLatencies } from './stats-repo.js';

/** Latencies one answer reads at most; past it, the later steps have no percentiles and the answer says so. */
export const MAX_LATENCIES = 100_000;

/** The nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], fraction: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)]!;
}

export interface StatsQuery {
  scope?: 'mine' | 'org';
  from?: string;
  to?: string;
  step?: string;
}

/**
 * The caller's notifications (or with scope=org their organizations') per step by status, and the delivery latency (the event's occurred_at to the
 * first 2xx answer) at p50 and p95 per step, of the deliveries made in it (docs/notifications.md#statistics).
 * Percentiles are computed here from the window's latencies, read in one indexed query, so both databases
 * give the same answer.
 */
export async function notificationStats(ctx: ServiceContext, query: StatsQuery) {
  const window = steppedWindow(query, ctx.clock.now());
  const whose = await whoseNotifications(ctx, {
    ...(query.scope === undefined ? {} : { scope: query.scope }),
  });
  const scope = { whose, start: window.start, to: window.to, stepMs: window.stepMs };
  const stepOf = (at: number) => Math.floor((at - window.start) / window.stepMs);
  const counts = Array.from({ length: window.points }, () => new Map<NotificationStatus, number>());
  for (const row of await countsByStep(ctx.db, scope)) counts[stepOf(row.at)]?.set(row.status, row.n);
  const latencies = await deliveryLatencies(ctx.db, scope, MAX_LATENCIES + 1);
  const capped = latencies.length > MAX_LATENCIES;
  const perStep = Array.from({ length: window.points }, (): number[] => []);
  for (const row of latencies.slice(0, MAX_LATENCIES)) perStep[stepOf(row.created_at)]?.push(row.latency_ms);
  // When capped, the step of the last latency read may be incomplete: it and the later ones have none.
  const lastComplete = capped ? stepOf(latencies[MAX_LATENCIES]!.created_at) - 1 : window.points - 1;
  return {
    from: isoUtc(window.from),
    to: isoUtc(window.to),
    step_seconds: window.stepMs / 1_000,
    latency_capped: capped,
    points: counts.map((byStatus, i) => {
      const sorted = i <= lastComplete ? perStep[i]!.sort((a, b) => a - b) : [];
      const count = (status: NotificationStatus) => byStatus.get(status) ?? 0;
      return {
        at: isoUtc(window.start + i * window.stepMs),
        pending: count('pending'),
        delivered: count('delivered'),
        failed: count('failed'),
        held: count('held'),
        expired: count('expired'),
        suppressed: count('suppressed'),
        cancelled: count('cancelled'),
        grouped: count('grouped'),
        latency_count: sorted.length,
        latency_p50_ms: percentile(sorted, 0.5),
        latency_p95_ms: percentile(sorted, 0.95),
      };
    }),
  };
}
