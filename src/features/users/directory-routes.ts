import { Type } from 'typebox';
import { contextOf } from '../../http/auth.js';
import { listSchema, pageRequest } from '../../http/lists.js';
import { forceQuery, IdParams, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { editUser, getUser, listUsers, removeUser } from './directory.js';
import { ROLES } from '../roles/catalog.js';
import { identityFields, OrgRef } from './schemas.js';

const tags = ['users'];
const WHO =
  'An Admin sees the users of their organization and those below it; anyone else sees only themselves (another → 404).';

const User = Type.Object({
  ...identityFields,
  organization: OrgRef,
  email_verified: Type.Boolean(),
  created_at: Type.String({ description: 'ISO 8601, UTC.' }),
});

const Belongings = Type.Object({
  alerts: Type.Integer(),
  webhooks: Type.Integer(),
  channels: Type.Integer(),
});

const UserWithBelongings = Type.Object({
  ...User.properties,
  owns: Type.Object(Belongings.properties, {
    description: 'What the user owns: what removing them with force=true removes too.',
  }),
});

const Unchanged = 'Empty or null: unchanged.';

const EditUserBody = Type.Object(
  {
    name: Type.Optional(
      Type.Union([Type.String({ maxLength: 128 }), Type.Null()], {
        description: `${Unchanged} Your own, or as an Admin anyone's you can see.`,
      }),
    ),
    roles: Type.Optional(
      Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 16 }), Type.Null()], {
        description: `${Unchanged} Role ids from GET /api/v2/role; replaces the user's roles (Admin only).`,
      }),
    ),
    password: Type.Optional(
      Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], {
        description: `${Unchanged} Anything else → 400: a password is changed by its owner at login.`,
      }),
    ),
    email: Type.Optional(
      Type.Union([Type.String({ maxLength: 254 }), Type.Null()], {
        description: `${Unchanged} The current address is accepted too; another → 400: addresses do not change.`,
      }),
    ),
  },
  { additionalProperties: false },
);

const Removed = Type.Object({
  id: Type.String(),
  status: Type.Literal('SUCCESS'),
  message: Type.String(),
  removed: Type.Object(Belongings.properties, { description: 'What went with the user.' }),
});

/** The user directory: list, read, edit and remove users (docs/rules/users.md). */
export async function userDirectoryRoutes(app: App): Promise<void> {
  app.get(
    '/api/v2/user',
    {
      config: { permission: 'profile:own' },
      schema: {
        tags,
        summary: 'The users you can see',
        ...listSchema({
          item: User,
          order: `oldest first (created_at, then id). ${WHO}`,
          ownership: 'unowned',
          filters: {
            search: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 128,
                description: 'Part of the name or e-mail address, any case.',
              }),
            ),
            role: Type.Optional(
              Type.Union(
                ROLES.map((role) => Type.Literal(role.id)),
                { description: 'Only users with this role.' },
              ),
            ),
          },
        }),
      },
    },
    async (request) => {
      const { page, size, org_id: orgId, search, role } = request.query;
      const query = {
        ...(orgId === undefined ? {} : { org_id: orgId }),
        ...(search === undefined ? {} : { search }),
        ...(role === undefined ? {} : { role }),
      };
      return listUsers(contextOf(request), query, pageRequest({ page, size }));
    },
  );

  app.get(
    '/api/v1/user/:id',
    {
      config: { permission: 'profile:own' },
      schema: {
        tags,
        summary: 'One user, with what they own',
        description: WHO,
        params: IdParams,
        response: responses({ 200: UserWithBelongings }, [401, 403, 404]),
      },
    },
    async (request) => getUser(contextOf(request), request.params.id),
  );

  app.put(
    '/api/v1/user/:id',
    {
      config: { permission: 'profile:own' },
      schema: {
        tags,
        summary: "Change a user's name or roles",
        description:
          `${WHO} Anyone may change their own name; roles need the Admin role (else 403), and the root organization's last Admin ` +
          'keeps it (409). A change of roles applies to the user’s keys at once, in every instance. Nothing to ' +
          'change → 400.',
        params: IdParams,
        body: EditUserBody,
        response: responses({ 200: User }, [400, 401, 403, 404, 409, 413, 415]),
      },
    },
    async (request) => editUser(contextOf(request), request.params.id, request.body),
  );

  app.delete(
    '/api/v1/user/:id',
    {
      config: { permission: 'users:manage' },
      schema: {
        tags,
        summary: 'Remove a user (Admin)',
        description:
          'The user’s API keys stop working at once, in every instance. A user who still owns alerts, webhooks ' +
          'or channels → 409 naming the counts, unless force=true, which removes those too (with their ' +
          'notifications and deliveries). Yourself, or the root organization’s last Admin → 409. A user you cannot see → 404.',
        params: IdParams,
        querystring: forceQuery('true: also remove the alerts, webhooks and channels the user owns.'),
        response: responses({ 200: Removed }, [400, 401, 403, 404, 409]),
      },
    },
    async (request) => removeUser(contextOf(request), request.params.id, request.query.force === 'true'),
  );
}
