import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { responses } from '../../http/schemas.js';
import { contextOf } from '../../http/auth.js';
import { revokeCallersKey } from '../apikeys/service.js';
import { login } from './service.js';

const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    new_password: Type.Optional(
      Type.String({
        minLength: 8,
        maxLength: 1024,
        description: 'Required at first login; at least 8 characters and different from the current one.',
      }),
    ),
  },
  { additionalProperties: false },
);

const LoginAnswer = Type.Object({
  api_key: Type.String({ description: 'A new API key for this user, shown only here.' }),
  user: Type.Object({
    id: Type.String(),
    name: Type.String(),
    roles: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
  }),
});

const ClientLoginBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 254, description: 'The e-mail address.' }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    otp: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Accepted for the published client and not checked: edgewatch accounts have no second factor.',
      }),
    ),
    new_password: LoginBody.properties.new_password,
  },
  { additionalProperties: false },
);

const ClientLoginAnswer = Type.Object({
  token: Type.String({
    description:
      'A new API key for this user, shown only here: send it as Authorization: X_AUTH_TOKEN <token> (or in X-API-KEY).',
  }),
  user: LoginAnswer.properties.user,
});

const LoggedOut = Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String() });

const LIMITS =
  'Limits: 10 failed logins per account per 15 minutes and 60 login requests per client address ' +
  'per minute, then 429 with Retry-After.';

export async function authRoutes(app: App): Promise<void> {
  app.post(
    '/api/v1/auth/login',
    {
      config: { public: true },
      schema: {
        tags: ['auth'],
        summary: 'Log in with e-mail and password; returns a new API key',
        description:
          'Wrong credentials → 401; e-mail not verified → 403; first login without new_password → 403. ' +
          LIMITS,
        body: LoginBody,
        response: responses({ 200: LoginAnswer }, [400, 401, 403, 413, 415, 429]),
      },
    },
    async (request) => login(app.ctx, request.body, request.ip),
  );

  app.post(
    '/api/v1/authenticate',
    {
      config: { public: true },
      schema: {
        tags: ['auth'],
        summary: 'Log in as the published client does; returns a new key as its token',
        description:
          'The same rules, checks and limits as POST /api/v1/auth/login, with the e-mail address as username: ' +
          'wrong credentials → 401; e-mail not verified → 403; first login without new_password → 403 (the ' +
          'published client cannot send one: change the password once through /api/v1/auth/login or the ' +
          'console). ' +
          LIMITS,
        body: ClientLoginBody,
        response: responses({ 200: ClientLoginAnswer }, [400, 401, 403, 413, 415, 429]),
      },
    },
    async (request) => {
      const { username, password, new_password: newPassword } = request.body;
      const input = {
        email: username,
        password,
        ...(newPassword === undefined ? {} : { new_password: newPassword }),
      };
      const { api_key: token, user } = await login(app.ctx, input, request.ip);
      return { token, user };
    },
  );

  app.post(
    '/api/v1/logout',
    {
      config: { permission: 'apikeys:own' },
      schema: {
        tags: ['auth'],
        summary: 'Log out: revoke the key this request was made with',
        description:
          'Whatever the body says (the published client sends empty credentials), the key that authenticated ' +
          'this request is revoked, in every instance at once. Other keys of the user keep working.',
        body: Type.Optional(Type.Object({}, { additionalProperties: true })),
        response: responses({ 200: LoggedOut }, [401, 413, 415]),
      },
    },
    async (request) => {
      await revokeCallersKey(contextOf(request));
      return { status: 'SUCCESS' as const, message: 'Logged out: the key of this request is revoked.' };
    },
  );
}
