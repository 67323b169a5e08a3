import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { responses } from '../../http/schemas.js';
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
          'Limits: 10 failed logins per account per 15 minutes and 60 login requests per client address ' +
          'per minute, then 429 with Retry-After.',
        body: LoginBody,
        response: responses({ 200: LoginAnswer }, [400, 401, 403, 413, 415, 429]),
      },
    },
    async (request) => login(app.ctx, request.body, request.ip),
  );
}
