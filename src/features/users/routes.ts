import { Type } from 'typebox';
import { contextOf } from '../../http/auth.js';
import type { App } from '../../http/types.js';
import { responses } from '../../http/schemas.js';
import { aliasDescription, foldAlias } from '../../http/aliases.js';
import { identityFields, OrgRef, RoleRef } from './schemas.js';
import { createUser, describeMe, verifyEmail } from './service.js';

const OrgId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "Organization of the new user: the caller's or one below it. Defaults to the caller's.",
});

const NewUserBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    email: Type.String({ maxLength: 254, format: 'email' }),
    password: Type.String({
      minLength: 8,
      maxLength: 1024,
      description: 'Initial password; changed at first login.',
    }),
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 16,
      description: 'Role ids from GET /api/v2/role.',
    }),
    org_id: Type.Optional(OrgId),
    create_under: Type.Optional({ ...OrgId, description: aliasDescription('org_id') }),
  },
  { additionalProperties: false },
);

const CreatedUser = Type.Object({ id: Type.String(), name: Type.String(), roles: Type.Array(RoleRef) });

const Me = Type.Object({
  ...identityFields,
  org: OrgRef,
  organization: { ...OrgRef, description: 'The same as org, under the name the published client reads.' },
});

export async function userRoutes(app: App): Promise<void> {
  app.post(
    '/api/v1/user',
    {
      config: { permission: 'users:create' },
      schema: {
        tags: ['users'],
        summary: 'Add a user (Admin)',
        description:
          'E-mail addresses are unique case-insensitively (409). The new user receives an e-mail with a ' +
          'single-use verification link valid for 24 hours, and must change the password at first login.',
        body: NewUserBody,
        response: responses({ 201: CreatedUser }, [400, 401, 403, 404, 409, 413, 415]),
      },
    },
    async (request, reply) => {
      const input = foldAlias(request.body, 'org_id', 'create_under');
      return reply.code(201).send(await createUser(contextOf(request), input));
    },
  );

  app.get(
    '/api/v1/user/verify-email',
    {
      config: { public: true },
      schema: {
        tags: ['users'],
        summary: 'Follow the e-mail verification link',
        querystring: Type.Object({ token: Type.String({ minLength: 1, maxLength: 256 }) }),
        response: responses(
          { 200: Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String() }) },
          [400],
        ),
      },
    },
    async (request) => verifyEmail(app.ctx, request.query.token),
  );

  for (const [url, alias] of [
    ['/api/v1/user/me', false],
    ['/api/v1/user/current', true],
  ] as const) {
    app.get(
      url,
      {
        config: { permission: 'profile:own' },
        schema: {
          tags: ['users'],
          summary: 'The caller, with organization and roles',
          ...(alias
            ? { description: "The same answer as GET /api/v1/user/me, at the published client's path." }
            : {}),
          response: responses({ 200: Me }, [401, 403]),
        },
      },
      async (request) => describeMe(contextOf(request)),
    );
  }
}
