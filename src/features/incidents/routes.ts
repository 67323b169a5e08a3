import { contextOf } from '../../http/auth.js';
import { listSchema, pageRequest } from '../../http/lists.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import * as schemas from './schemas.js';
import { getIncident, listIncidents, listMembers } from './service.js';

const tags = ['notifications'];

const READ_RULE =
  'One of yours; with Admin or Operator also another user’s in your organization or one below it, as the ' +
  'scope=org list shows them. Any other → 404.';

export async function incidentRoutes(app: App): Promise<void> {
  app.get(
    '/api/v2/incident',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary:
          "The caller's incidents (one alert's open trouble for one organization or node, its notifications " +
          "grouped), or with scope=org every user's in the caller's organizations",
        ...listSchema({
          item: schemas.Incident,
          order: 'firing first, then newest first within each status (opened_at, then id)',
          filters: schemas.incidentFilters,
          ownership: "anyone's",
        }),
      },
    },
    async (request) => {
      const { page, size, ...query } = request.query;
      return listIncidents(contextOf(request), query, pageRequest({ page, size }));
    },
  );

  app.get(
    '/api/v1/incident/:id',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary: 'An incident, with every message it sent and their webhook deliveries',
        description: READ_RULE,
        params: IdParams,
        response: responses({ 200: schemas.IncidentWithMessages }, [401, 403, 404]),
      },
    },
    async (request) => getIncident(contextOf(request), request.params.id),
  );

  const members = listSchema({
    item: schemas.IncidentMember,
    order:
      'changed ones first (new, then recovered), then the rest; each by since (oldest first), then by key',
    errors: [404],
  });
  app.get(
    '/api/v2/incident/:id/members',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary:
          "An incident's members, every one: the full list its messages link to (members_url) when they " +
          'list only the first 100',
        ...members,
        description: `${members.description} ${READ_RULE}`,
        params: IdParams,
      },
    },
    async (request) => {
      const { page, size } = request.query;
      return listMembers(contextOf(request), request.params.id, pageRequest({ page, size }));
    },
  );
}
