import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  badInputRequest,
  expectBadInputError,
  expectError,
  JSON_CONTENT_TYPE,
  type BadInputCase,
} from './support/error-shape.js';
import { latestVerificationToken, startTestApp, type TestApp } from './support/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(4).toString('hex')}@example.com`;
}

function newUser(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Dana Operator',
    email: uniqueEmail(),
    password: 'first-password',
    roles: ['operator'],
    ...overrides,
  };
}

async function tableCount(table: 'users' | 'email_outbox' | 'email_verifications'): Promise<number> {
  const row = await t.ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function writtenRows() {
  return {
    users: await tableCount('users'),
    outbox: await tableCount('email_outbox'),
    verifications: await tableCount('email_verifications'),
  };
}

/** Runs a request that must be refused and checks it left no user, token or e-mail behind. */
async function expectNothingWritten(send: () => Promise<unknown>): Promise<void> {
  const before = await writtenRows();
  await send();
  expect(await writtenRows()).toEqual(before);
}

async function createOrg(name: string, parentId?: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/org', {
    body: { name, ...(parentId === undefined ? {} : { parent_id: parentId }) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

describe('POST /api/v1/user', () => {
  it('creates a user and answers exactly {id, name, roles}', async () => {
    const input = newUser({ roles: ['read_only', 'operator'] });
    const res = await t.request('POST', '/api/v1/user', { body: input });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: input.name,
      roles: [
        { id: 'read_only', name: 'Read Only' },
        { id: 'operator', name: 'Operator' },
      ],
    });
    expect(res.text).not.toContain(input.password);
    expect(res.text).not.toContain('argon2');

    const stored = await t.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(stored.password_hash).not.toContain(input.password);
    expect(stored.email_verified_at).toBeNull();
    expect(stored.password_change_required).toBe(1);
  });

  it("puts the user in the caller's organization unless org_id names one below it", async () => {
    const me = await t.request('GET', '/api/v1/user/me');
    const child = await createOrg(`Child ${randomBytes(3).toString('hex')}`);
    const inRoot = await t.request('POST', '/api/v1/user', { body: newUser() });
    const inChild = await t.request('POST', '/api/v1/user', { body: newUser({ org_id: child }) });
    expect(inRoot.status).toBe(201);
    expect(inChild.status).toBe(201);
    const orgOf = async (id: string) =>
      (await t.ctx.db.selectFrom('users').select('org_id').where('id', '=', id).executeTakeFirstOrThrow())
        .org_id;
    expect(await orgOf(inRoot.body.id)).toBe(me.body.org_id);
    expect(await orgOf(inChild.body.id)).toBe(child);
  });

  it('removes repeated role ids', async () => {
    const res = await t.request('POST', '/api/v1/user', { body: newUser({ roles: ['admin', 'admin'] }) });
    expect(res.status).toBe(201);
    expect(res.body.roles).toEqual([{ id: 'admin', name: 'Admin' }]);
  });

  it('sends one verification e-mail whose link is valid for 24 hours', async () => {
    const input = newUser();
    const res = await t.request('POST', '/api/v1/user', { body: input });
    const mails = (await t.ctx.db.selectFrom('email_outbox').selectAll().execute()).filter(
      (row) => row.recipient === input.email,
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]?.body_text).toMatch(
      /http:\/\/edgewatch\.test\/api\/v1\/user\/verify-email\?token=[A-Za-z0-9_-]{43}\b/,
    );
    const user = await t.ctx.db
      .selectFrom('users')
      .select('created_at')
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    const token = await t.ctx.db
      .selectFrom('email_verifications')
      .selectAll()
      .where('user_id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(token.expires_at - user.created_at).toBe(24 * 60 * 60 * 1000);
    expect(mails[0]?.body_text).not.toContain(token.token_hash);
  });

  it('refuses an e-mail address already taken, whatever its case, with 409', async () => {
    const email = uniqueEmail('Dup');
    expect((await t.request('POST', '/api/v1/user', { body: newUser({ email }) })).status).toBe(201);
    for (const variant of [email, email.toLowerCase(), email.toUpperCase()]) {
      await expectNothingWritten(async () => {
        const res = await t.request('POST', '/api/v1/user', { body: newUser({ email: variant }) });
        expectError(res, 409, 'CONFLICT');
      });
    }
  });

  it('lets exactly one of two simultaneous requests for one address win', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all([
      t.request('POST', '/api/v1/user', { body: newUser({ email }) }),
      t.request('POST', '/api/v1/user', { body: newUser({ email: email.toUpperCase() }) }),
    ]);
    expect(results.map((res) => res.status).sort()).toEqual([201, 409]);
    const rows = await t.ctx.db
      .selectFrom('users')
      .select('id')
      .where('email_normalized', '=', email.toLowerCase())
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('refuses unknown role ids and an empty role list with 400', async () => {
    await expectNothingWritten(async () => {
      const res = await t.request('POST', '/api/v1/user', { body: newUser({ roles: ['operator', 'root'] }) });
      expectError(res, 400, 'BAD_REQUEST');
      expect(res.body.message).toContain('root');
      expect(res.body.details).toEqual([{ field: 'roles', message: expect.stringContaining('root') }]);
    });
    await expectNothingWritten(async () => {
      const res = await t.request('POST', '/api/v1/user', { body: newUser({ roles: [] }) });
      expectError(res, 400, 'BAD_REQUEST');
      expect(res.body.details[0].field).toBe('roles');
    });
  });

  it('needs a password of at least 8 characters', async () => {
    await expectNothingWritten(async () => {
      const res = await t.request('POST', '/api/v1/user', { body: newUser({ password: '1234567' }) });
      expectError(res, 400, 'BAD_REQUEST');
      expect(res.body.details[0].field).toBe('password');
    });
    const res = await t.request('POST', '/api/v1/user', { body: newUser({ password: '12345678' }) });
    expect(res.status).toBe(201);
  });

  it('answers 404 for an organization outside the caller’s subtree, or unknown', async () => {
    const left = await createOrg(`Left ${randomBytes(3).toString('hex')}`);
    const right = await createOrg(`Right ${randomBytes(3).toString('hex')}`);
    const below = await createOrg(`Below left ${randomBytes(3).toString('hex')}`, left);
    const leftAdmin = await t.userWithRoles(['admin'], left);
    for (const orgId of [right, 'no-such-org', (await t.request('GET', '/api/v1/user/me')).body.org_id]) {
      await expectNothingWritten(async () => {
        const res = await t.request('POST', '/api/v1/user', {
          key: leftAdmin.key,
          body: newUser({ org_id: orgId }),
        });
        expectError(res, 404, 'NOT_FOUND');
      });
    }
    const ok = await t.request('POST', '/api/v1/user', {
      key: leftAdmin.key,
      body: newUser({ org_id: below }),
    });
    expect(ok.status).toBe(201);
  });

  it('is for Admins only: 403 for Operator and Read Only, 401 without a valid key', async () => {
    const operator = await t.userWithRoles(['operator']);
    const reader = await t.userWithRoles(['read_only']);
    for (const key of [operator.key, reader.key]) {
      await expectNothingWritten(async () => {
        expectError(await t.request('POST', '/api/v1/user', { key, body: newUser() }), 403, 'FORBIDDEN');
      });
    }
    for (const key of [null, '', 'ew_unknown-key-unknown-key-unknown-key-000']) {
      await expectNothingWritten(async () => {
        expectError(await t.request('POST', '/api/v1/user', { key, body: newUser() }), 401, 'UNAUTHORIZED');
      });
    }
  });

  it('checks the key before the body: no key and a broken body is still 401', async () => {
    const res = await t.request('POST', '/api/v1/user', {
      key: null,
      payload: '{broken',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 401, 'UNAUTHORIZED');
  });
});

const json = JSON_CONTENT_TYPE;

const BAD_USER_INPUTS: BadInputCase[] = [
  {
    name: 'name is a number',
    body: newUser({ name: 42 }),
    status: 400,
    errorCode: 'BAD_REQUEST',
    field: 'name',
  },
  {
    name: 'email is a number',
    body: newUser({ email: 7 }),
    status: 400,
    errorCode: 'BAD_REQUEST',
    field: 'email',
  },
  { name: 'password is null', body: newUser({ password: null }), status: 400, errorCode: 'BAD_REQUEST' },
  {
    name: 'password is a number',
    body: newUser({ password: 12345678 }),
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  { name: 'roles is a string', body: newUser({ roles: 'admin' }), status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'roles holds numbers', body: newUser({ roles: [1] }), status: 400, errorCode: 'BAD_REQUEST' },
  {
    name: 'roles holds an object',
    body: newUser({ roles: [{ id: 'admin' }] }),
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  { name: 'org_id is empty', body: newUser({ org_id: '' }), status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'org_id is a number', body: newUser({ org_id: 1 }), status: 400, errorCode: 'BAD_REQUEST' },
  {
    name: 'name is empty',
    body: newUser({ name: '' }),
    status: 400,
    errorCode: 'BAD_REQUEST',
    field: 'name',
  },
  {
    name: 'e-mail has no @',
    body: newUser({ email: 'nobody.example.com' }),
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: 'e-mail has a space',
    body: newUser({ email: 'a b@example.com' }),
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  ...(['name', 'email', 'password', 'roles'] as const).map((missing) => {
    const body: Record<string, unknown> = newUser();
    delete body[missing];
    return { name: `${missing} is missing`, body, status: 400, errorCode: 'BAD_REQUEST', field: missing };
  }),
  {
    name: 'an extra field',
    body: newUser({ is_admin: true }),
    status: 400,
    errorCode: 'BAD_REQUEST',
    field: 'is_admin',
  },
  {
    name: 'a client-chosen id',
    body: newUser({ id: 'mine' }),
    status: 400,
    errorCode: 'BAD_REQUEST',
    field: 'id',
  },
  { name: 'a password hash', body: newUser({ password_hash: 'x' }), status: 400, errorCode: 'BAD_REQUEST' },
  {
    name: 'name of 129 characters',
    body: newUser({ name: 'n'.repeat(129) }),
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: 'e-mail of 300 characters',
    body: newUser({ email: `${'e'.repeat(288)}@example.com` }),
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: 'password of 2,000 characters',
    body: newUser({ password: 'p'.repeat(2000) }),
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: '17 roles',
    body: newUser({ roles: Array(17).fill('operator') }),
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: 'a body over 64 KiB',
    body: newUser({ name: 'n'.repeat(70 * 1024) }),
    status: 413,
    errorCode: 'PAYLOAD_TOO_LARGE',
  },
  { name: 'not JSON', payload: 'name=x&email=y', headers: json, status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'truncated JSON', payload: '{"name": "x",', headers: json, status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'an empty body', payload: '', headers: json, status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'an array body', body: [newUser()], status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'a null body', payload: 'null', headers: json, status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'a string body', payload: '"user"', headers: json, status: 400, errorCode: 'BAD_REQUEST' },
  {
    name: 'a __proto__ key',
    payload: JSON.stringify(newUser()).replace('{', '{"__proto__":{"roles":["admin"]},'),
    headers: json,
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: 'text/plain',
    payload: JSON.stringify(newUser()),
    headers: { 'content-type': 'text/plain' },
    status: 415,
    errorCode: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'a form',
    payload: 'name=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 415,
    errorCode: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'no content type',
    payload: JSON.stringify(newUser()),
    status: 415,
    errorCode: 'UNSUPPORTED_MEDIA_TYPE',
  },
];

describe('POST /api/v1/user with bad input', () => {
  it.each(BAD_USER_INPUTS)('$name → $status, nothing written', async (input) => {
    await expectNothingWritten(async () => {
      const res = await t.request('POST', '/api/v1/user', badInputRequest(input));
      expectBadInputError(res, input);
    });
  });
});

describe('GET /api/v1/user/verify-email', () => {
  async function createdUser(): Promise<{ id: string; email: string; token: string }> {
    const input = newUser();
    const res = await t.request('POST', '/api/v1/user', { body: input });
    expect(res.status).toBe(201);
    return { id: res.body.id, email: input.email, token: await latestVerificationToken(t.ctx, input.email) };
  }

  const verify = (token: string) =>
    t.request('GET', `/api/v1/user/verify-email?token=${encodeURIComponent(token)}`, { key: null });

  const verifiedAt = async (id: string) =>
    (
      await t.ctx.db
        .selectFrom('users')
        .select('email_verified_at')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).email_verified_at;

  it('verifies the address once, without an API key', async () => {
    const user = await createdUser();
    const res = await t.request('GET', `/api/v1/user/verify-email?token=${user.token}`, {
      key: null,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: 'SUCCESS', message: expect.any(String) });
    expect(await verifiedAt(user.id)).toEqual(expect.any(Number));
  });

  it('refuses a used link with 400', async () => {
    const user = await createdUser();
    expect((await verify(user.token)).status).toBe(200);
    const again = await verify(user.token);
    expectError(again, 400, 'BAD_REQUEST');
    expect(again.body.message).toMatch(/already been used/);
  });

  it('refuses an unknown token with 400', async () => {
    expectError(await verify(randomBytes(32).toString('base64url')), 400, 'BAD_REQUEST');
  });

  it('refuses an expired token with 400 and leaves the address unverified', async () => {
    const user = await createdUser();
    await t.ctx.db
      .updateTable('email_verifications')
      .set({ expires_at: Date.now() - 1000 })
      .where('user_id', '=', user.id)
      .execute();
    const res = await verify(user.token);
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.message).toMatch(/expired/);
    expect(await verifiedAt(user.id)).toBeNull();
  });

  it('refuses a missing, empty, repeated or oversized token with 400', async () => {
    const user = await createdUser();
    for (const url of [
      '/api/v1/user/verify-email',
      '/api/v1/user/verify-email?token=',
      `/api/v1/user/verify-email?token=${user.token}&token=${user.token}`,
      `/api/v1/user/verify-email?token=${'a'.repeat(300)}`,
    ]) {
      expectError(await t.request('GET', url, { key: null }), 400, 'BAD_REQUEST');
    }
    expect(await verifiedAt(user.id)).toBeNull();
  });

  it('lets only one of two simultaneous uses of a link succeed', async () => {
    const user = await createdUser();
    const results = await Promise.all([verify(user.token), verify(user.token)]);
    expect(results.map((res) => res.status).sort()).toEqual([200, 400]);
  });

  it("verifies only the link's own user", async () => {
    const first = await createdUser();
    const second = await createdUser();
    expect((await verify(first.token)).status).toBe(200);
    expect(await verifiedAt(second.id)).toBeNull();
  });
});
