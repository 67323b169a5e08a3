import { sql, type ExpressionBuilder } from 'kysely';
import type { Database, Executor, NotificationStatus } from '../../db/types.js';

/**
 * The queries behind the notification statistics; both read the window by (user_id, created_at), or for
 * an organization's by (org_id, created_at).
 */

export interface StatsWindow {
  /** The caller's own, or everyone's in these organizations. */
  whose: { userId: string } | { orgIds: readonly string[] };
  /** A multiple of stepMs. */
  start: number;
  to: number;
  stepMs: number;
}

/** The window's notifications: the user's, or those of the organizations (never none: the caller's own). */
function whoseAre(window: StatsWindow, alias: '' | 'n.') {
  return 'userId' in window.whose
    ? sql<boolean>`${sql.ref(`${alias}user_id`)} = ${window.whose.userId}`
    : sql<boolean>`${sql.ref(`${alias}org_id`)} in (${sql.join(window.whose.orgIds)})`;
}

/** How many of the notifications were made in each step, by their status now. */
export async function countsByStep(
  db: Executor,
  window: StatsWindow,
): Promise<{ at: number; status: NotificationStatus; n: number }[]> {
  // The step is a validated whole number: a literal, so the select and the GROUP BY are one expression.
  const step = sql<number>`created_at - created_at % ${sql.lit(window.stepMs)}`;
  const rows = await db
    .selectFrom('notifications')
    .select((eb) => [step.as('at'), 'status', eb.fn.countAll<number | string>().as('n')])
    .where(whoseAre(window, ''))
    .where('created_at', '>=', window.start)
    .where('created_at', '<', window.to)
    .where('incident_sequence', 'is', null)
    .groupBy([step, 'status'])
    .execute();
  return rows.map((row) => ({ at: Number(row.at), status: row.status, n: Number(row.n) }));
}

/**
 * For each of the user's webhook and channel deliveries made in the window and answered 2xx, oldest first,
 * at most `limit`: when its notification was made, and the time from the event to the first 2xx answer (a
 * replay answered later does not move it).
 */
type FirstAnswerScope = Database & { d: Database['deliveries'] };

export async function deliveryLatencies(
  db: Executor,
  window: StatsWindow,
  limit: number,
): Promise<{ created_at: number; latency_ms: number }[]> {
  // The first 2xx answer: one in the attempt log (a success a replay logged) comes before the success a
  // delivery keeps on its row (migration 0028).
  const firstAnswer = (eb: ExpressionBuilder<FirstAnswerScope, 'd'>) =>
    eb.fn.coalesce(
      eb
        .selectFrom('delivery_attempts as a')
        .select(sql<number>`min(a.at + a.duration_ms)`.as('first'))
        .whereRef('a.delivery_id', '=', 'd.id')
        .where('a.status_code', '>=', 200)
        .where('a.status_code', '<', 300),
      sql<number>`d.last_attempt_at + d.success_duration_ms`,
    );
  const rows = await db
    .selectFrom('notifications as n')
    .innerJoin('deliveries as d', 'd.notification_id', 'n.id')
    .select((eb) => [
      'n.created_at as created_at',
      sql<number>`${firstAnswer(eb)} - n.occurred_at`.as('latency_ms'),
    ])
    .where((eb) => eb(firstAnswer(eb), 'is not', null))
    .where(whoseAre(window, 'n.'))
    .where('n.created_at', '>=', window.start)
    .where('n.created_at', '<', window.to)
    .orderBy('n.created_at')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ created_at: Number(row.created_at), latency_ms: Number(row.latency_ms) }));
}
