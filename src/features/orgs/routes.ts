import { Type } from 'typebox';
import { contextOf } from '../../http/auth.js';
import { isoUtc } from '../../lib/clock.js';
import type { App } from '../../http/types.js';
import { IdParams, responses } from '../../http/schemas.js';
import { aliasDescription, foldAlias } from '../../http/aliases.js';
import { listSchema, mapPage, pageRequest } from '../../http/lists.js';
import type { OrgRow } from './repo.js';
import { createOrg, getVisibleOrg, listVisibleOrgs } from './service.js';

const Org = Type.Object({
  id: Type.String(),
  name: Type.String(),
  parent_id: Type.Union([Type.String(), Type.Null()], { description: 'null for the root organization.' }),
  created_at: Type.String({ description: 'ISO 8601, UTC.' }),
});

const CountedOrg = Type.Object({
  ...Org.properties,
  node_count: Type.Integer({ description: 'Nodes of this organization (not of those below it).' }),
  user_count: Type.Integer({ description: 'Users of this organization (not of those below it).' }),
});

const ParentId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "The caller's organization or one below it; defaults to the caller's.",
});

const present = <T extends OrgRow>(org: T) => ({ ...org, created_at: isoUtc(org.created_at) });

export async function orgRoutes(app: App): Promise<void> {
  app.post(
    '/api/v1/org',
    {
      config: { permission: 'orgs:create' },
      schema: {
        tags: ['organizations'],
        summary: "Create an organization below the caller's (Admin)",
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 128 }),
            parent_id: Type.Optional(ParentId),
            create_under: Type.Optional({ ...ParentId, description: aliasDescription('parent_id') }),
          },
          { additionalProperties: false },
        ),
        response: responses({ 201: Org }, [400, 401, 403, 404, 413, 415]),
      },
    },
    async (request, reply) => {
      const input = foldAlias(request.body, 'parent_id', 'create_under');
      return reply.code(201).send(present(await createOrg(contextOf(request), input)));
    },
  );

  app.get(
    '/api/v2/org',
    {
      config: { permission: 'orgs:read' },
      schema: {
        tags: ['organizations'],
        summary: "The caller's organization (or org_id's) and every organization below it",
        ...listSchema({
          item: CountedOrg,
          order: "by creation time, so the caller's own organization (or org_id's) comes first",
          ownership: 'unowned',
        }),
      },
    },
    async (request) =>
      mapPage(
        await listVisibleOrgs(contextOf(request), pageRequest(request.query), request.query.org_id),
        present,
      ),
  );

  app.get(
    '/api/v1/org/:id',
    {
      config: { permission: 'orgs:read' },
      schema: {
        tags: ['organizations'],
        summary: "One organization in the caller's subtree",
        params: IdParams,
        response: responses({ 200: CountedOrg }, [401, 403, 404]),
      },
    },
    async (request) => present(await getVisibleOrg(contextOf(request), request.params.id)),
  );
}
