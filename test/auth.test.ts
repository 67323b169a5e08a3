import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../src/features/apikeys/key-material.js';
import { LOGIN_LIMITS, login as loginService } from '../src/features/auth/service.js';
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

const INITIAL_PASSWORD = 'initial-password';

let addressCounter = 0;
/** A client address of its own, so that the per-address limit of one test never touches another. */
function freshAddress(): string {
  addressCounter += 1;
  return `203.0.${Math.floor(addressCounter / 250)}.${(addressCounter % 250) + 1}`;
}

function login(body: unknown, remoteAddress = freshAddress()) {
  return t.request('POST', '/api/v1/auth/login', { key: null, body, remoteAddress });
}

/** A user added by the Admin; verified unless asked otherwise, first password still unchanged. */
async function newUser(options: { verified?: boolean; roles?: string[] } = {}) {
  const email = `login-${randomBytes(4).toString('hex')}@example.com`;
  const roles = options.roles ?? ['operator'];
  const created = await t.request('POST', '/api/v1/user', {
    body: { name: 'Lee Login', email, password: INITIAL_PASSWORD, roles },
  });
  expect(created.status, created.text).toBe(201);
  if (options.verified !== false) {
    const token = await latestVerificationToken(t.ctx, email);
    const verified = await t.request('GET', `/api/v1/user/verify-email?token=${token}`, { key: null });
    expect(verified.status).toBe(200);
  }
  return { id: created.body.id as string, email };
}

/** A verified user who has done the first-login password change; returns the current password. */
async function activeUser() {
  const user = await newUser();
  const password = `active-${randomBytes(4).toString('hex')}`;
  const res = await login({ email: user.email, password: INITIAL_PASSWORD, new_password: password });
  expect(res.status, res.text).toBe(200);
  return { ...user, password };
}

async function attemptCount(): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('login_attempts')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function retryAfter(res: { headers: Record<string, unknown> }): number {
  const value = Number(res.headers['retry-after']);
  expect(Number.isInteger(value)).toBe(true);
  return value;
}

describe('POST /api/v1/auth/login: checks in the contract order', () => {
  it('answers a wrong password and an unknown e-mail alike with 401', async () => {
    const user = await activeUser();
    const wrongPassword = await login({ email: user.email, password: 'not-the-password' });
    const unknownEmail = await login({ email: 'nobody-here@example.com', password: user.password });
    expectError(wrongPassword, 401, 'UNAUTHORIZED');
    expectError(unknownEmail, 401, 'UNAUTHORIZED');
    expect(unknownEmail.body).toEqual(wrongPassword.body);
  });

  it('refuses an account without a password (the bootstrap admin) with the same 401', async () => {
    const res = await login({ email: 'admin@edgewatch.local', password: 'anything-at-all' });
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.body.message).toBe((await login({ email: 'x@example.com', password: 'y' })).body.message);
  });

  it('checks the password before saying the e-mail is not verified', async () => {
    const user = await newUser({ verified: false });
    expectError(await login({ email: user.email, password: 'wrong-password' }), 401, 'UNAUTHORIZED');
    const res = await login({ email: user.email, password: INITIAL_PASSWORD, new_password: 'next-password' });
    expectError(res, 403, 'FORBIDDEN');
    expect(res.body.message).toMatch(/not verified/i);
  });

  it('asks for a password change at the first login', async () => {
    const user = await newUser();
    const res = await login({ email: user.email, password: INITIAL_PASSWORD });
    expectError(res, 403, 'FORBIDDEN');
    expect(res.body.message).toMatch(/password change is required/i);
  });

  it('changes the password and answers {api_key, user}; the key works', async () => {
    const user = await newUser({ roles: ['read_only'] });
    const res = await login({
      email: user.email,
      password: INITIAL_PASSWORD,
      new_password: 'my-own-password',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      api_key: expect.stringMatching(/^ew_[A-Za-z0-9_-]{43}$/),
      user: { id: user.id, name: 'Lee Login', roles: [{ id: 'read_only', name: 'Read Only' }] },
    });
    const me = await t.request('GET', '/api/v1/user/me', { key: res.body.api_key });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: user.id, email: user.email, roles: [{ id: 'read_only' }] });
  });

  it('needs no new_password later, refuses the old password, and issues a new key each time', async () => {
    const user = await newUser();
    const first = await login({
      email: user.email,
      password: INITIAL_PASSWORD,
      new_password: 'second-password',
    });
    expect(first.status).toBe(200);
    expectError(await login({ email: user.email, password: INITIAL_PASSWORD }), 401, 'UNAUTHORIZED');
    const later = await login({ email: user.email, password: 'second-password' });
    expect(later.status, later.text).toBe(200);
    expect(later.body.api_key).not.toBe(first.body.api_key);
    for (const key of [first.body.api_key, later.body.api_key]) {
      expect((await t.request('GET', '/api/v1/user/me', { key })).status).toBe(200);
    }
  });

  it('accepts the e-mail address in any case', async () => {
    const user = await activeUser();
    const res = await login({ email: user.email.toUpperCase(), password: user.password });
    expect(res.status, res.text).toBe(200);
  });

  it('refuses a new password equal to the current one with 400 and changes nothing', async () => {
    const user = await newUser();
    const res = await login({
      email: user.email,
      password: INITIAL_PASSWORD,
      new_password: INITIAL_PASSWORD,
    });
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details).toEqual([{ field: 'new_password', message: expect.any(String) }]);
    const again = await login({ email: user.email, password: INITIAL_PASSWORD });
    expect(again.body.message).toMatch(/password change is required/i);
  });

  it('refuses a new password shorter than 8 characters with 400', async () => {
    const user = await newUser();
    const res = await login({ email: user.email, password: INITIAL_PASSWORD, new_password: 'short12' });
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details[0].field).toBe('new_password');
  });

  it('does not change the password when the current one is wrong', async () => {
    const user = await newUser();
    const res = await login({
      email: user.email,
      password: 'wrong-password',
      new_password: 'hijacked-password',
    });
    expectError(res, 401, 'UNAUTHORIZED');
    expectError(await login({ email: user.email, password: 'hijacked-password' }), 401, 'UNAUTHORIZED');
    const ok = await login({
      email: user.email,
      password: INITIAL_PASSWORD,
      new_password: 'proper-password',
    });
    expect(ok.status).toBe(200);
  });

  it('ignores an X-API-KEY header: login is open', async () => {
    const user = await activeUser();
    const res = await t.request('POST', '/api/v1/auth/login', {
      key: 'ew_not-a-real-key-not-a-real-key-not-a-real',
      body: { email: user.email, password: user.password },
      remoteAddress: freshAddress(),
    });
    expect(res.status).toBe(200);
  });
});

describe('POST /api/v1/auth/login: rate limits', () => {
  it('allows 10 failed logins per account, then answers 429 with Retry-After even to the right password', async () => {
    const user = await activeUser();
    const { max, windowMs } = LOGIN_LIMITS.perAccountFailures;
    expect(max).toBe(10);
    for (let i = 0; i < max; i += 1) {
      expectError(await login({ email: user.email, password: `wrong-${i}` }), 401, 'UNAUTHORIZED');
    }
    const blocked = await login({ email: user.email, password: user.password });
    expectError(blocked, 429, 'TOO_MANY_REQUESTS');
    expect(retryAfter(blocked)).toBeGreaterThan(0);
    expect(retryAfter(blocked)).toBeLessThanOrEqual(windowMs / 1000);
    // The case of the address does not make it another account.
    expectError(
      await login({ email: user.email.toUpperCase(), password: user.password }),
      429,
      'TOO_MANY_REQUESTS',
    );

    const other = await activeUser();
    expect((await login({ email: other.email, password: other.password })).status).toBe(200);
  });

  it('holds the account limit against a burst of simultaneous guesses', async () => {
    const user = await activeUser();
    const { max } = LOGIN_LIMITS.perAccountFailures;
    const burst = await Promise.all(
      Array.from({ length: max + 6 }, (_, i) => login({ email: user.email, password: `guess-${i}` })),
    );
    const statuses = burst.map((res) => res.status);
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    // Simultaneous tries may be refused early, never late: in all, exactly `max` passwords get checked.
    let checked = statuses.filter((status) => status === 401).length;
    expect(checked).toBeLessThanOrEqual(max);
    for (let i = 0; i <= max; i += 1) {
      const res = await login({ email: user.email, password: `later-guess-${i}` });
      if (res.status === 429) break;
      expect(res.status).toBe(401);
      checked += 1;
    }
    expect(checked).toBe(max);
    expectError(await login({ email: user.email, password: user.password }), 429, 'TOO_MANY_REQUESTS');
  });

  it('allows 60 login requests per address per minute, then 429 with Retry-After', async () => {
    const user = await activeUser();
    const { max, windowMs } = LOGIN_LIMITS.perAddress;
    expect(max).toBe(60);
    const address = freshAddress();
    for (let i = 0; i < max; i += 1) {
      const res = await login({ email: `spray-${i}@example.com`, password: 'guess-password' }, address);
      expect(res.status).toBe(401);
    }
    const blocked = await login({ email: user.email, password: user.password }, address);
    expectError(blocked, 429, 'TOO_MANY_REQUESTS');
    expect(retryAfter(blocked)).toBeGreaterThan(0);
    expect(retryAfter(blocked)).toBeLessThanOrEqual(windowMs / 1000);
    // Another address, and the account itself, are unaffected.
    expect((await login({ email: user.email, password: user.password })).status).toBe(200);
  });

  it('counts successful logins towards the address limit too', async () => {
    const user = await activeUser();
    const address = freshAddress();
    const half = LOGIN_LIMITS.perAddress.max / 2;
    for (let i = 0; i < half; i += 1) {
      expect((await login({ email: user.email, password: user.password }, address)).status).toBe(200);
      expect((await login({ email: `spray-ok-${i}@example.com`, password: 'x' }, address)).status).toBe(401);
    }
    expectError(
      await login({ email: user.email, password: user.password }, address),
      429,
      'TOO_MANY_REQUESTS',
    );
  });
});

describe('POST /api/v1/auth/login: simultaneous first logins', () => {
  it('changes the password once: one answers 200 with the only key, the other 401', async () => {
    const user = await newUser();
    const candidates = ['racer-one-password', 'racer-two-password'];
    const answers = await Promise.all(
      candidates.map((new_password) =>
        login({ email: user.email, password: INITIAL_PASSWORD, new_password }),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([200, 401]);
    const winner = answers.findIndex((res) => res.status === 200);
    const [won, lost] = winner === 0 ? answers : [...answers].reverse();
    const [winnerPassword, loserPassword] = winner === 0 ? candidates : [...candidates].reverse();
    expectError(lost!, 401, 'UNAUTHORIZED');
    const wrongCredentials = await login({ email: user.email, password: 'not-the-password' });
    expect(lost!.body.message).toBe(wrongCredentials.body.message);

    const keys = await t.ctx.db
      .selectFrom('api_keys')
      .select('key_hash')
      .where('user_id', '=', user.id)
      .execute();
    expect(keys).toEqual([{ key_hash: hashApiKey(won!.body.api_key) }]);

    expect((await login({ email: user.email, password: winnerPassword })).status).toBe(200);
    expectError(await login({ email: user.email, password: loserPassword }), 401, 'UNAUTHORIZED');
    expectError(await login({ email: user.email, password: INITIAL_PASSWORD }), 401, 'UNAUTHORIZED');
  });
});

describe('login attempts are kept only as long as a limit can count them', () => {
  it('forgets attempts older than the longest window when a later attempt is recorded, even a failed one', async () => {
    const user = await activeUser();
    for (let i = 0; i < 3; i += 1) {
      expectError(await login({ email: user.email, password: `wrong-${i}` }), 401, 'UNAUTHORIZED');
    }
    const longest = Math.max(LOGIN_LIMITS.perAddress.windowMs, LOGIN_LIMITS.perAccountFailures.windowMs);
    const later = Date.now() + longest + 60_000;
    const olderThanWindow = async () => {
      const row = await t.ctx.db
        .selectFrom('login_attempts')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('at', '<', later - longest)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    expect(await olderThanWindow()).toBeGreaterThanOrEqual(4);

    const ctx = { ...t.ctx, clock: { now: () => later } };
    await expect(
      loginService(ctx, { email: user.email, password: 'wrong-later' }, freshAddress()),
    ).rejects.toMatchObject({ statusCode: 401 });
    expect(await olderThanWindow()).toBe(0);
    const rows = await t.ctx.db
      .selectFrom('login_attempts')
      .select(['at', 'succeeded'])
      .where('email_normalized', '=', user.email)
      .execute();
    expect(rows.map((row) => ({ at: Number(row.at), succeeded: Number(row.succeeded) }))).toEqual([
      { at: later, succeeded: 0 },
    ]);
  });
});

const json = JSON_CONTENT_TYPE;
const valid = { email: 'someone@example.com', password: 'some-password' };

const BAD_LOGINS: BadInputCase[] = [
  { name: 'email missing', body: { password: 'x' }, status: 400, errorCode: 'BAD_REQUEST', field: 'email' },
  {
    name: 'password missing',
    body: { email: valid.email },
    status: 400,
    errorCode: 'BAD_REQUEST',
    field: 'password',
  },
  {
    name: 'email is a number',
    body: { ...valid, email: 1 },
    status: 400,
    errorCode: 'BAD_REQUEST',
    field: 'email',
  },
  { name: 'password is null', body: { ...valid, password: null }, status: 400, errorCode: 'BAD_REQUEST' },
  {
    name: 'password is an array',
    body: { ...valid, password: ['a'] },
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  { name: 'email is empty', body: { ...valid, email: '' }, status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'password is empty', body: { ...valid, password: '' }, status: 400, errorCode: 'BAD_REQUEST' },
  {
    name: 'new_password is a number',
    body: { ...valid, new_password: 12345678 },
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: 'new_password too short',
    body: { ...valid, new_password: '1234567' },
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: 'an extra field',
    body: { ...valid, remember: true },
    status: 400,
    errorCode: 'BAD_REQUEST',
    field: 'remember',
  },
  {
    name: 'a 2,000-character password',
    body: { ...valid, password: 'p'.repeat(2000) },
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: 'a 300-character e-mail',
    body: { ...valid, email: 'e'.repeat(300) },
    status: 400,
    errorCode: 'BAD_REQUEST',
  },
  {
    name: 'a body over 64 KiB',
    body: { ...valid, password: 'p'.repeat(70 * 1024) },
    status: 413,
    errorCode: 'PAYLOAD_TOO_LARGE',
  },
  { name: 'not JSON', payload: 'email=a&password=b', headers: json, status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'an empty body', payload: '', headers: json, status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'an array body', body: [valid], status: 400, errorCode: 'BAD_REQUEST' },
  { name: 'a null body', payload: 'null', headers: json, status: 400, errorCode: 'BAD_REQUEST' },
  {
    name: 'text/plain',
    payload: JSON.stringify(valid),
    headers: { 'content-type': 'text/plain' },
    status: 415,
    errorCode: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'no content type',
    payload: JSON.stringify(valid),
    status: 415,
    errorCode: 'UNSUPPORTED_MEDIA_TYPE',
  },
];

describe('POST /api/v1/auth/login with bad input', () => {
  it.each(BAD_LOGINS)('$name → $status, no attempt recorded', async (input) => {
    const before = await attemptCount();
    const res = await t.request('POST', '/api/v1/auth/login', {
      key: null,
      remoteAddress: freshAddress(),
      ...badInputRequest(input),
    });
    expectBadInputError(res, input);
    expect(await attemptCount()).toBe(before);
  });
});
