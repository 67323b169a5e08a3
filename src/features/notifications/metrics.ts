import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { afterCommit } from '../../db/transaction.js';
import type { Db, Executor } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';

export interface AlertMetrics {
  /** Counted once the transaction that stored them commits. */
  eventsRecorded(trx: Executor, types: readonly string[]): void;
  /** A notification entered a status (made pending, held or suppressed; later delivered, failed, expired). */
  notificationsEntered(trx: Executor, status: string, reason: string | null, count?: number): void;
  /** A request to a webhook: `success`, or the failure's kind. */
  deliveryAttempt(outcome: string): void;
  /** From the event to its notification's 2xx answer. */
  delivered(seconds: number): void;
  /** Pending deliveries the sweep found with nothing to send them: should stay 0. */
  strandedFound(count: number): void;
}

/** Counts after the commit when the transaction reports it, else at once (a plain statement commits itself). */
function whenCommitted(trx: Executor, count: () => void): void {
  if (!afterCommit(trx, count)) count();
}

/**
 * The alert engine's metrics: events, notifications and delivery attempts as this process saw them pass,
 * and, read from the database at each scrape, what waits: held notifications per webhook and the age of
 * the oldest pending delivery.
 */
export function registerAlertMetrics(registry: Registry, db: Db, clock: Clock): AlertMetrics {
  const events = new Counter({
    name: 'edgewatch_events_total',
    help: 'Fleet events stored by this process, by type.',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const notifications = new Counter({
    name: 'edgewatch_notifications_total',
    help:
      'Notifications entering a status in this process, by status and reason: made pending, held or ' +
      'suppressed (reason maintenance or node_unreachable); later delivered, failed or expired.',
    labelNames: ['status', 'reason'] as const,
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'edgewatch_delivery_attempts_total',
    help: 'Webhook requests made by this process, by outcome: success, or the failure (timeout, refused, bad_status, tls, dns, blocked_address, …).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'edgewatch_delivery_latency_seconds',
    help: 'From an event to its notification delivered to a webhook (2xx), for deliveries recorded by this process.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [registry],
  });
  const stranded = new Counter({
    name: 'edgewatch_stranded_deliveries_total',
    help:
      'Pending webhook deliveries the sweep found with nothing that would send them (no due time, or a ' +
      'disabled webhook), then sent or held. Should stay 0: any other value is a bug worth a report.',
    registers: [registry],
  });
  new Gauge({
    name: 'edgewatch_held_notifications',
    help: 'Notifications held for a disabled webhook (sent once it is verified again), by webhook.',
    labelNames: ['webhook_id'] as const,
    registers: [registry],
    async collect() {
      const rows = await db
        .selectFrom('deliveries')
        .select(['webhook_id', (eb) => eb.fn.countAll<number | string>().as('n')])
        .where('status', '=', 'held')
        .groupBy('webhook_id')
        .execute();
      this.reset();
      for (const row of rows) this.set({ webhook_id: row.webhook_id }, Number(row.n));
    },
  });
  new Gauge({
    name: 'edgewatch_oldest_pending_delivery_age_seconds',
    help: 'How long the oldest webhook delivery still pending has waited since it was made (0 when none).',
    registers: [registry],
    async collect() {
      // Each webhook's oldest pending delivery is the first entry of its range of deliveries_webhook_idx.
      const row = await db
        .selectFrom('webhooks')
        .select((eb) =>
          eb.fn
            .min(
              eb
                .selectFrom('deliveries')
                .select((inner) => inner.fn.min('deliveries.created_at').as('first'))
                .whereRef('deliveries.webhook_id', '=', 'webhooks.id')
                .where('deliveries.status', '=', 'pending'),
            )
            .as('oldest'),
        )
        .executeTakeFirst();
      const oldest = row?.oldest ?? null;
      this.set(oldest === null ? 0 : Math.max(0, clock.now() - Number(oldest)) / 1000);
    },
  });
  return {
    eventsRecorded(trx, types) {
      whenCommitted(trx, () => {
        for (const type of types) events.inc({ type });
      });
    },
    notificationsEntered(trx, status, reason, count = 1) {
      if (count > 0) whenCommitted(trx, () => notifications.inc({ status, reason: reason ?? '' }, count));
    },
    deliveryAttempt(outcome) {
      attempts.inc({ outcome });
    },
    delivered(seconds) {
      latency.observe(seconds);
    },
    strandedFound(count) {
      stranded.inc(count);
    },
  };
}
