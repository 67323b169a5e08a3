import { Type, type TSchema } from 'typebox';
import { contextOf } from '../../../http/auth.js';
import { listSchema, pageRequest } from '../../../http/lists.js';
import { DeleteWithAlertsAnswer, forceQuery, IdParams, responses } from '../../../http/schemas.js';
import type { App } from '../../../http/types.js';
import { deleteResource, getResource, listResources } from './service.js';

const Ref = Type.Object({ id: Type.String(), name: Type.String() });

const common = {
  id: Type.String(),
  key: Type.String({ description: "The agent's own key for it." }),
  name: Type.String(),
  node: Ref,
  organization: Ref,
  state_since: Type.String({ description: 'ISO 8601, UTC: when its state last changed.' }),
  stale: Type.Boolean({
    description:
      'true while its node is UNREACHABLE: the state is only the last one the node reported, not a current one.',
  }),
  as_of: Type.Union([Type.String(), Type.Null()], {
    description:
      "While stale, when the state was last known (ISO 8601, UTC: the node's last report); else null.",
  }),
  created_at: Type.String({ description: 'ISO 8601, UTC: when a report first listed it.' }),
};

const TunnelState = Type.Union([Type.Literal('CONNECTED'), Type.Literal('TERMINATED')]);
const ServiceStatus = Type.Union([
  Type.Literal('HEALTHY'),
  Type.Literal('UNHEALTHY'),
  Type.Literal('TERMINATED'),
]);

const KINDS = [
  {
    table: 'tunnels' as const,
    plural: 'tunnel',
    what: 'tunnel',
    scope: 'tunnel_id',
    filter: 'state',
    item: Type.Object({
      ...common,
      state: TunnelState,
      peer_node_id: Type.Union([Type.String(), Type.Null()], { description: 'The node at the other end.' }),
    }),
    states: TunnelState as TSchema,
  },
  {
    table: 'services' as const,
    plural: 'service',
    what: 'service',
    scope: 'pod_id',
    filter: 'status',
    item: Type.Object({ ...common, status: ServiceStatus }),
    states: ServiceStatus as TSchema,
  },
];

/** The same four routes for tunnels and for services: list, read, forget. */
export async function resourceRoutes(app: App): Promise<void> {
  for (const kind of KINDS) {
    app.get(
      `/api/v2/${kind.plural}`,
      {
        config: { permission: 'fleet:read' },
        schema: {
          tags: ['fleet'],
          summary: `The ${kind.what}s of the nodes of an organization (and those below it)`,
          ...listSchema({
            item: kind.item,
            order: 'by name, then id',
            filters: {
              org_id: Type.Optional(
                Type.String({ minLength: 1, maxLength: 64, description: "Defaults to the caller's." }),
              ),
              include_child: Type.Optional(Type.Boolean({ description: 'Default true.' })),
              node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
              [kind.filter]: Type.Optional(kind.states),
              stale: Type.Optional(
                Type.Boolean({
                  description: 'true: only those whose node is UNREACHABLE (state unknown now).',
                }),
              ),
            },
            ownership: 'unowned',
          }),
        },
      },
      async (request) => {
        const query = request.query as Record<string, unknown> & { page?: number; size?: number };
        const state = query[kind.filter] as string | undefined;
        // One handler for two item shapes (state or status): the response schema checks each at run time.
        return (await listResources(
          contextOf(request),
          kind.table,
          {
            ...(typeof query.org_id === 'string' ? { org_id: query.org_id } : {}),
            ...(typeof query.include_child === 'boolean' ? { include_child: query.include_child } : {}),
            ...(typeof query.node_id === 'string' ? { node_id: query.node_id } : {}),
            ...(state === undefined ? {} : { state }),
            ...(typeof query.stale === 'boolean' ? { stale: query.stale } : {}),
          },
          pageRequest(query),
        )) as never;
      },
    );

    app.get(
      `/api/v1/${kind.plural}/:id`,
      {
        config: { permission: 'fleet:read' },
        schema: {
          tags: ['fleet'],
          summary: `One ${kind.what}`,
          params: IdParams,
          response: responses({ 200: kind.item }, [401, 403, 404]),
        },
      },
      async (request) => (await getResource(contextOf(request), kind.table, request.params.id)) as never,
    );

    app.delete(
      `/api/v1/${kind.plural}/:id`,
      {
        config: { permission: 'fleet:write' },
        schema: {
          tags: ['fleet'],
          summary: `Forget a ${kind.what} until a report lists it again`,
          description:
            `The next report that lists it makes it a new ${kind.what} (a new id, a first-sighting event). ` +
            `Alerts scoped to it (settings.${kind.scope}) and no force=true → 409, nothing removed; with ` +
            'force=true they are removed too, in the same transaction, and listed in removed_alert_ids.',
          params: IdParams,
          querystring: forceQuery(`true removes the alerts scoped to the ${kind.what} too.`),
          response: responses({ 200: DeleteWithAlertsAnswer }, [400, 401, 403, 404, 409]),
        },
      },
      async (request) =>
        deleteResource(contextOf(request), kind.table, request.params.id, request.query.force === 'true'),
    );
  }
}
