import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/features/roles/catalog.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/harness.js';
import { expectError } from './support/error-shape.js';

/** One operation of the OpenAPI document. */
interface Operation {
  method: string;
  path: string;
  permission: string | undefined;
  hasBody: boolean;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
// The only API routes a caller may use without a key.
const PUBLIC_ROUTES = [
  'POST /api/v1/auth/login',
  'POST /api/v1/authenticate',
  'GET /api/v1/user/verify-email',
];
// The route a node's agent uses: its own token (X-NODE-TOKEN) and never a user's key.
const NODE_TOKEN_ROUTES = ['POST /api/v1/agent/report'];
// Routes only an Admin may use: every other role gets 403.
const ADMIN_ONLY = ['POST /api/v1/user', 'POST /api/v1/org', 'DELETE /api/v1/user/{id}'];
// What Read Only may change besides reading: its own keys and its own profile.
const OWN_THINGS = new Set(['apikeys:own', 'profile:own']);

let t: TestApp;
let operations: Operation[];
let keys: { admin: string; operator: string; read_only: string; revoked: string; unknown: string };

const name = (op: Operation) => `${op.method} ${op.path}`;
const concreteUrl = (path: string) => path.replace(/\{[^}]+\}/g, '01900000-0000-7000-8000-000000000000');

function call(op: Operation, key: string | null, extra: { payload?: string; contentType?: string } = {}) {
  const withBody = op.hasBody || extra.payload !== undefined;
  return t.request(op.method, concreteUrl(op.path), {
    key,
    ...(withBody
      ? {
          payload: extra.payload ?? '{}',
          headers: { 'content-type': extra.contentType ?? 'application/json' },
        }
      : {}),
  });
}

beforeAll(async () => {
  t = await startTestApp();
  const doc = await t.request('GET', '/openapi.json', { key: null });
  operations = Object.entries(doc.body.paths as Record<string, Record<string, any>>)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([path, item]) =>
      METHODS.filter((method) => item[method] !== undefined).map((method) => ({
        method: method.toUpperCase(),
        path,
        permission: item[method]['x-permission'] as string | undefined,
        hasBody: item[method].requestBody !== undefined,
      })),
    );
  const operator = await t.userWithRoles(['operator']);
  const reader = await t.userWithRoles(['read_only']);
  const revoked = await t.request('POST', '/api/v1/apikey', { body: { name: 'revoked' } });
  expect((await t.request('DELETE', `/api/v1/apikey/${revoked.body.id}`)).status).toBe(200);
  keys = {
    admin: ADMIN_KEY,
    operator: operator.key,
    read_only: reader.key,
    revoked: revoked.body.key,
    unknown: `ew_${randomBytes(32).toString('base64url')}`,
  };
});
afterAll(async () => {
  await t.close();
});

const secured = () =>
  operations.filter((op) => !PUBLIC_ROUTES.includes(name(op)) && !NODE_TOKEN_ROUTES.includes(name(op)));

describe('the route inventory', () => {
  it('reads the API routes from the OpenAPI document', () => {
    expect(operations.length).toBeGreaterThanOrEqual(10);
    for (const route of [
      ...PUBLIC_ROUTES,
      ...ADMIN_ONLY,
      'GET /api/v1/user/me',
      'DELETE /api/v1/apikey/{id}',
    ]) {
      expect(operations.map(name)).toContain(route);
    }
  });

  it('has no public API route but login and e-mail verification, and the agent report (node token)', () => {
    const open = operations.filter((op) => op.permission === undefined).map(name);
    expect(open.sort()).toEqual([...PUBLIC_ROUTES, ...NODE_TOKEN_ROUTES].sort());
  });

  it('refuses every user key on the node-token route', async () => {
    for (const op of operations.filter((candidate) => NODE_TOKEN_ROUTES.includes(name(candidate)))) {
      for (const key of [keys.admin, keys.operator, keys.read_only]) {
        expect((await call(op, key)).status, name(op)).toBe(401);
      }
    }
  });

  it('names a known permission on every other route', () => {
    for (const op of secured()) expect(PERMISSIONS, name(op)).toContain(op.permission);
  });
});

describe('authentication: every keyed route refuses a missing, unknown or revoked key', () => {
  const cases = ['none', 'empty', 'unknown', 'revoked'] as const;

  it.each(cases)('key %s → 401', async (which) => {
    for (const op of secured()) {
      const key = which === 'none' ? null : which === 'empty' ? '' : keys[which];
      const res = await call(op, key);
      expect(res.status, `${name(op)}: ${res.text}`).toBe(401);
      expectError(res, 401, 'UNAUTHORIZED');
    }
  });

  it('checks the key before it reads the body', async () => {
    for (const op of secured().filter((o) => o.hasBody)) {
      const res = await call(op, null, { payload: 'not json', contentType: 'text/plain' });
      expect(res.status, name(op)).toBe(401);
      const malformed = await call(op, keys.revoked, { payload: '{"broken":' });
      expect(malformed.status, name(op)).toBe(401);
    }
  });

  it('takes the key only from the X-API-KEY header', async () => {
    const bearer = await t.request('GET', '/api/v1/user/me', {
      key: null,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expectError(bearer, 401, 'UNAUTHORIZED');
    const query = await t.request('GET', '/api/v1/user/me', { key: null, query: { api_key: ADMIN_KEY } });
    expectError(query, 401, 'UNAUTHORIZED');
  });

  it('refuses a key that differs from a real one only in case or by a character', async () => {
    for (const variant of [
      ADMIN_KEY.toUpperCase(),
      ADMIN_KEY.slice(0, -1),
      `${ADMIN_KEY}x`,
      ` ${ADMIN_KEY}x`,
    ]) {
      expectError(await t.request('GET', '/api/v1/user/me', { key: variant }), 401, 'UNAUTHORIZED');
    }
  });
});

describe('authorization: roles decide 403', () => {
  it.each(['operator', 'read_only'] as const)('refuses %s on every Admin-only route', async (role) => {
    const count = async () =>
      Number(
        (
          await t.ctx.db
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    for (const route of ADMIN_ONLY) {
      const [method, path] = route.split(' ') as [string, string];
      const body =
        path === '/api/v1/user'
          ? { name: 'Sneaky', email: `sneaky-${role}@example.com`, password: 'long-enough', roles: ['admin'] }
          : { name: 'Sneaky org' };
      const res = await t.request(method, path, { key: keys[role], body });
      expectError(res, 403, 'FORBIDDEN');
    }
    expect(await count()).toBe(before);
    const orgs = await t.request('GET', '/api/v2/org');
    expect(orgs.body.results.map((org: { name: string }) => org.name)).not.toContain('Sneaky org');
  });

  async function spareKey(key: string): Promise<string> {
    const res = await t.request('POST', '/api/v1/apikey', { key, body: { name: 'spare' } });
    expect(res.status, res.text).toBe(201);
    return res.body.key as string;
  }

  /** The contract's roles: Admin everything; Operator all but Admin's; Read Only reads and its own things. */
  function expectedForbidden(role: 'admin' | 'operator' | 'read_only', op: Operation): boolean {
    if (role === 'admin') return false;
    if (ADMIN_ONLY.includes(name(op))) return true;
    if (role === 'operator') return false;
    return op.method !== 'GET' && !OWN_THINGS.has(op.permission ?? '');
  }

  it.each(['admin', 'operator', 'read_only'] as const)(
    'answers %s 403 exactly where its role does not reach, on every route',
    async (role) => {
      const forbidden: string[] = [];
      const expected: string[] = [];
      for (const op of secured()) {
        if (expectedForbidden(role, op)) expected.push(name(op));
        // Logging out revokes the key it is called with: a spare one of the same user goes instead.
        const key = name(op) === 'POST /api/v1/logout' ? await spareKey(keys[role]) : keys[role];
        const res = await call(op, key);
        expect(res.status, `${name(op)}: ${res.text}`).toBeLessThan(500);
        expect(res.status, name(op)).not.toBe(401);
        if (res.status === 403) {
          forbidden.push(name(op));
          expectError(res, 403, 'FORBIDDEN');
          expect(res.body.message).toContain(op.permission);
        }
      }
      expect(forbidden.sort()).toEqual(expected.sort());
    },
  );
});

describe('keys stay out of the logs', () => {
  it('never writes an API key to the log', async () => {
    await t.request('GET', '/api/v1/user/me', { key: keys.unknown });
    await t.request('POST', '/api/v1/apikey', { body: { name: 'logged?' } });
    const logs = t.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const key of Object.values(keys)) expect(logs).not.toContain(key);
  });
});
