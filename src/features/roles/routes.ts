import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { responses } from '../../http/schemas.js';
import { ROLES } from './catalog.js';

const Role = Type.Object({
  id: Type.String({ description: 'Stable role id; use it in the roles of a new user.' }),
  name: Type.String(),
  permissions: Type.Array(Type.String()),
});

export async function roleRoutes(app: App): Promise<void> {
  const body = { results: ROLES.map((role) => ({ ...role, permissions: [...role.permissions] })) };
  app.get(
    '/api/v2/role',
    {
      config: { permission: 'roles:read' },
      schema: {
        tags: ['roles'],
        summary: 'List the built-in roles',
        response: responses({ 200: Type.Object({ results: Type.Array(Role) }) }, [401, 403]),
      },
    },
    () => body,
  );
}
