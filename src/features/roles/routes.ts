import { Type } from 'typebox';
import { contextOf } from '../../http/auth.js';
import type { App } from '../../http/types.js';
import { listedOrg } from '../orgs/service.js';
import { listSchema, pageOf, pageRequest } from '../../http/lists.js';
import { ROLES } from './catalog.js';

const Role = Type.Object({
  id: Type.String({ description: 'Stable role id; use it in the roles of a new user.' }),
  name: Type.String(),
  permissions: Type.Array(Type.String()),
});

export async function roleRoutes(app: App): Promise<void> {
  const roles = ROLES.map((role) => ({ ...role, permissions: [...role.permissions] }));
  app.get(
    '/api/v2/role',
    {
      config: { permission: 'roles:read' },
      schema: {
        tags: ['roles'],
        summary: 'List the built-in roles',
        ...listSchema({
          item: Role,
          order:
            'Admin, Operator, Read Only (from most to least allowed). The roles are the same in every ' +
            'organization: org_id only has to be one you can see',
          ownership: 'unowned',
        }),
      },
    },
    async (request) => {
      await listedOrg(contextOf(request), request.query.org_id);
      return pageOf(roles, pageRequest(request.query));
    },
  );
}
