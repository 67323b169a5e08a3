import { Type } from 'typebox';
import { contextOf } from '../../../http/auth.js';
import { responses } from '../../../http/schemas.js';
import { MAX_POINTS, StepQuery, WindowQuery } from '../../../http/time-window.js';
import type { App } from '../../../http/types.js';
import { fleetHistory } from './service.js';

const Count = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });

const Point = Type.Object({
  at: Type.String({
    description: 'ISO 8601, UTC: the start of the step. The step that holds now also counts the fleet now.',
  }),
  alive: Count('The fewest nodes ALIVE in any minute of the step; null where no snapshot was taken.'),
  unreachable: Count('The most nodes UNREACHABLE in any minute of the step.'),
  new: Count('The most nodes NEW (registered, never reported).'),
  tunnels_unhealthy: Count('The most tunnels known not to be CONNECTED.'),
  tunnels_unknown: Count('The most tunnels of UNREACHABLE nodes: their state was unknown.'),
  services_unhealthy: Count('The most services known not to be HEALTHY.'),
  services_unknown: Count('The most services of UNREACHABLE nodes.'),
});

const History = Type.Object({
  org_id: Type.String(),
  from: Type.String({ description: 'ISO 8601, UTC.' }),
  to: Type.String({ description: 'ISO 8601, UTC (excluded).' }),
  step_seconds: Type.Integer(),
  points: Type.Array(Point),
});

const Query = Type.Object(
  {
    org_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: "Defaults to the caller's." }),
    ),
    include_child: Type.Optional(
      Type.Boolean({ description: 'Sum the organizations below org_id too (default true).' }),
    ),
    ...WindowQuery,
    step: Type.Optional(StepQuery),
  },
  { additionalProperties: false },
);

export async function fleetHistoryRoutes(app: App): Promise<void> {
  app.get(
    '/api/v2/fleet/history',
    {
      config: { permission: 'fleet:read' },
      schema: {
        tags: ['fleet'],
        summary: 'Nodes by state, and tunnels and services unhealthy or unknown, over time',
        description:
          'From a snapshot of the counts taken every minute and kept FLEET_HISTORY_RETENTION_DAYS. One point ' +
          'per step from `from` (rounded down to a step) until `to`; each series takes its worst minute in ' +
          'the step (fewest alive, most of the others), so a short outage shows at its height whatever the ' +
          'step. A step in which no snapshot was taken (edgewatch was down) has nulls: a gap, not zeros. ' +
          `More than ${MAX_POINTS.toLocaleString('en')} points, from not before to, or a bad step → 400; an ` +
          'organization outside yours → 404.',
        querystring: Query,
        response: responses({ 200: History }, [400, 401, 403, 404]),
      },
    },
    async (request) => fleetHistory(contextOf(request), request.query),
  );
}
