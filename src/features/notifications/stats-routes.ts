import { Type } from 'typebox';
import { contextOf } from '../../http/auth.js';
import { responses } from '../../http/schemas.js';
import { MAX_POINTS, StepQuery, WindowQuery } from '../../http/time-window.js';
import type { App } from '../../http/types.js';
import { notificationFilters } from './schemas.js';
import { MAX_LATENCIES, notificationStats } from './stats.js';

const Count = (status: string) =>
  Type.Integer({ description: `Notifications made in the step that are ${status} now.` });
const Latency = (which: string) =>
  Type.Union([Type.Integer(), Type.Null()], {
    description: `The ${which} of the step's delivery latencies, in ms; null when none was delivered.`,
  });

const Stats = Type.Object({
  from: Type.String({ description: 'ISO 8601, UTC.' }),
  to: Type.String({ description: 'ISO 8601, UTC (excluded).' }),
  step_seconds: Type.Integer(),
  latency_capped: Type.Boolean({
    description:
      `true when the window held more than ${MAX_LATENCIES.toLocaleString('en')} delivered notifications: ` +
      'the latencies of the oldest that many are read, and the later steps have none.',
  }),
  points: Type.Array(
    Type.Object({
      at: Type.String({ description: 'ISO 8601, UTC: the start of the step.' }),
      pending: Count('pending'),
      delivered: Count('delivered'),
      failed: Count('failed'),
      held: Count('held'),
      expired: Count('expired'),
      suppressed: Count('suppressed'),
      cancelled: Count('cancelled'),
      grouped: Count('grouped'),
      latency_count: Type.Integer({ description: "Deliveries of the step's notifications answered 2xx." }),
      latency_p50_ms: Latency('median (nearest rank)'),
      latency_p95_ms: Latency('95th percentile (nearest rank)'),
    }),
  ),
});

export async function notificationStatsRoutes(app: App): Promise<void> {
  app.get(
    '/api/v2/notification/stats',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags: ['notifications'],
        summary: 'Notifications per step by status, and their delivery latency at p50 and p95',
        description:
          "Whose: the caller's own, or with scope=org everyone's in their organizations, as in the list. " +
          'Each notification counts in the step it was made in, under its status now. Latency: from the ' +
          "event's occurred_at to the first 2xx answer of its webhook or channel delivery (e-mails have " +
          'none). from and to default to the last 24 hours; from not before to, a bad step or more than ' +
          `${MAX_POINTS.toLocaleString('en')} points → 400.`,
        querystring: Type.Object(
          {
            scope: notificationFilters.scope,
            ...WindowQuery,
            step: Type.Optional(StepQuery),
          },
          { additionalProperties: false },
        ),
        response: responses({ 200: Stats }, [400, 401, 403, 404]),
      },
    },
    async (request) => notificationStats(contextOf(request), request.query),
  );
}
