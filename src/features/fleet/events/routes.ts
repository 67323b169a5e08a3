import { Type } from 'typebox';
import { contextOf } from '../../../http/auth.js';
import { InstantQuery as Instant } from '../../../http/instants.js';
import { listSchema, pageRequest } from '../../../http/lists.js';
import type { App } from '../../../http/types.js';
import { NOTIFICATION_TYPES } from '../../notifications/types.js';
import { listEvents } from './service.js';

const Event = Type.Object({
  id: Type.String(),
  type: Type.String({ description: 'One of the seven notification types.' }),
  condition: Type.String({
    description:
      'The alert_me value it matches; or, for CERT_EXPIRY, RENEWED: a certificate that had been warned of was ' +
      'replaced by one valid for longer (no alert_me names it: it resolves PagerDuty incidents).',
  }),
  organization: Type.Object({ id: Type.String(), name: Type.String() }),
  node: Type.Object({
    id: Type.String(),
    name: Type.Union([Type.String(), Type.Null()], { description: 'null once the node was deleted.' }),
  }),
  resource: Type.Object({ kind: Type.String(), id: Type.String(), name: Type.String() }),
  previous_state: Type.Union([Type.String(), Type.Null()]),
  current_state: Type.String({
    description: 'A state; an address for IP changes; a version for upgrades; the expiry time for expiries.',
  }),
  sequence: Type.Integer({ description: "The resource's own count of changes, strictly increasing." }),
  occurred_at: Type.String({ description: 'ISO 8601, UTC.' }),
  detected_at: Type.String({ description: 'ISO 8601, UTC: when edgewatch found the change.' }),
});

const filters = {
  org_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: "Defaults to the caller's." }),
  ),
  include_child: Type.Optional(
    Type.Boolean({ description: 'Also the organizations below org_id (default true).' }),
  ),
  node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  type: Type.Optional(Type.Union(NOTIFICATION_TYPES.map((type) => Type.Literal(type)))),
  resource_kind: Type.Optional(
    Type.Union([Type.Literal('node'), Type.Literal('tunnel'), Type.Literal('service')]),
  ),
  start_date: Type.Optional(Instant),
  end_date: Type.Optional(Instant),
};

export async function eventRoutes(app: App): Promise<void> {
  app.get(
    '/api/v2/event',
    {
      config: { permission: 'fleet:read' },
      schema: {
        tags: ['fleet'],
        summary: "The fleet's events (every change of a node, tunnel or service)",
        ...listSchema({
          item: Event,
          order: 'newest first (occurred_at, then id)',
          filters,
          ownership: 'unowned',
        }),
      },
    },
    async (request) => {
      const { page, size, ...query } = request.query;
      return listEvents(contextOf(request), query, pageRequest({ page, size }));
    },
  );
}
