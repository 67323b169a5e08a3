import { Type } from 'typebox';
import { contextOf } from '../../../http/auth.js';
import { IdParams, responses } from '../../../http/schemas.js';
import { WindowQuery } from '../../../http/time-window.js';
import type { App } from '../../../http/types.js';
import { MAX_STATE_CHANGES, nodeAvailability } from './service.js';

const Instant = (description: string) => Type.String({ description: `ISO 8601, UTC: ${description}` });
const InstantOrNull = (description: string) =>
  Type.Union([Type.String(), Type.Null()], { description: `ISO 8601, UTC: ${description}` });

const Availability = Type.Object({
  from: Instant('as asked.'),
  to: Instant('as asked (excluded).'),
  known_from: InstantOrNull(
    'where the bands start: the latest of from, the registration and the retention horizon; null when ' +
      'nothing of the range is known.',
  ),
  known_to: InstantOrNull('where the bands end: the earlier of to and now.'),
  uptime_percent: Type.Union([Type.Number(), Type.Null()], {
    description: 'ALIVE time over ALIVE and UNREACHABLE time, 0–100 with two decimals; null without either.',
  }),
  bands: Type.Array(
    Type.Object({
      state: Type.Union([Type.Literal('NEW'), Type.Literal('ALIVE'), Type.Literal('UNREACHABLE')]),
      from: Instant('the start of the band.'),
      to: Instant('its end (excluded).'),
    }),
  ),
});

export async function availabilityRoutes(app: App): Promise<void> {
  app.get(
    '/api/v1/node/:id/availability',
    {
      config: { permission: 'fleet:read' },
      schema: {
        tags: ['fleet'],
        summary: "A node's states over time as bands, and its uptime",
        description:
          "From the node's NODE_STATE_CHANGE events, kept EVENT_RETENTION_DAYS: what lies before the horizon " +
          'is not known, and the bands start there. from and to default to the last 24 hours; from not ' +
          `before to, or more than ${MAX_STATE_CHANGES.toLocaleString('en')} changes in the range → 400.`,
        params: IdParams,
        querystring: Type.Object(WindowQuery, { additionalProperties: false }),
        response: responses({ 200: Availability }, [400, 401, 403, 404]),
      },
    },
    async (request) => await nodeAvailability(contextOf(request), request.params.id, request.query),
  );
}
