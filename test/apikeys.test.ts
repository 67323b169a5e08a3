import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyCache } from '../src/features/apikeys/key-cache.js';
import { hashApiKey } from '../src/features/apikeys/key-material.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/harness.js';
import { expectError } from './support/error-shape.js';

let t: TestApp;
let reader: Awaited<ReturnType<TestApp['userWithRoles']>>;

beforeAll(async () => {
  t = await startTestApp();
  reader = await t.userWithRoles(['read_only']);
});
afterAll(async () => {
  await t.close();
});

async function countKeys(): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function createKey(key = ADMIN_KEY, name?: string) {
  const res = await t.request('POST', '/api/v1/apikey', { key, body: name === undefined ? {} : { name } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; prefix: string; created_at: string; key: string };
}

describe('POST /api/v1/apikey', () => {
  it('creates a key, shows it once with its id, name, prefix and creation time', async () => {
    const res = await t.request('POST', '/api/v1/apikey', { body: { name: 'deploy bot' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'id', 'key', 'name', 'prefix']);
    expect(res.body.name).toBe('deploy bot');
    expect(res.body.key.startsWith(res.body.prefix)).toBe(true);
    expect(res.body.prefix.length).toBeLessThan(res.body.key.length / 2);
    // 32 random bytes are 43 base64url characters.
    expect(res.body.key.length).toBeGreaterThanOrEqual(43);
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    const me = await t.request('GET', '/api/v1/user/me', { key: res.body.key });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe('admin@edgewatch.local');
  });

  it('makes a different key every time', async () => {
    const a = await createKey();
    const b = await createKey();
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
  });

  it('needs no name: no body, or an empty body under the JSON content type', async () => {
    const bare = await t.request('POST', '/api/v1/apikey');
    expect(bare.status, bare.text).toBe(201);
    expect(bare.body.name.length).toBeGreaterThan(0);
    const empty = await t.request('POST', '/api/v1/apikey', {
      payload: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(empty.status, empty.text).toBe(201);
    const emptyObject = await t.request('POST', '/api/v1/apikey', { body: {} });
    expect(emptyObject.status).toBe(201);
  });

  it('stores only a hash of the key', async () => {
    const created = await createKey();
    const row = await t.ctx.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(hashApiKey(created.key));
    expect(Object.values(row)).not.toContain(created.key);
  });

  const REASONS: Record<number, string> = {
    400: 'BAD_REQUEST',
    413: 'PAYLOAD_TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE',
  };
  const badInputs: { label: string; payload: string; contentType?: string; status: number }[] = [
    { label: 'name is a number', payload: '{"name":123}', status: 400 },
    { label: 'name is null', payload: '{"name":null}', status: 400 },
    { label: 'name is an object', payload: '{"name":{"a":"b"}}', status: 400 },
    { label: 'name is empty', payload: '{"name":""}', status: 400 },
    { label: 'name is too long', payload: JSON.stringify({ name: 'x'.repeat(129) }), status: 400 },
    { label: 'an extra field', payload: '{"name":"ok","admin":true}', status: 400 },
    { label: 'an array body', payload: '[]', status: 400 },
    { label: 'a string body', payload: '"key"', status: 400 },
    { label: 'a null body', payload: 'null', status: 400 },
    { label: 'malformed JSON', payload: '{"name":', status: 400 },
    { label: 'a prototype key', payload: '{"__proto__":{"x":1}}', status: 400 },
    { label: 'a body over 64 KiB', payload: JSON.stringify({ name: 'x'.repeat(70 * 1024) }), status: 413 },
    { label: 'text/plain', payload: 'name=x', contentType: 'text/plain', status: 415 },
    {
      label: 'a form body',
      payload: 'name=x',
      contentType: 'application/x-www-form-urlencoded',
      status: 415,
    },
  ];

  it.each(badInputs)('refuses $label with $status and writes nothing', async (input) => {
    const before = await countKeys();
    const res = await t.request('POST', '/api/v1/apikey', {
      payload: input.payload,
      headers: { 'content-type': input.contentType ?? 'application/json' },
    });
    expectError(res, input.status, REASONS[input.status] ?? '');
    expect(await countKeys()).toBe(before);
  });
});

describe('GET /api/v2/apikey', () => {
  it("lists the caller's active keys without the key or its hash", async () => {
    const created = await createKey(ADMIN_KEY, 'listed');
    const res = await t.request('GET', '/api/v2/apikey');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['total_count', 'results']);
    expect(res.body.total_count).toBe(res.body.results.length);
    const listed = res.body.results.find((key: { id: string }) => key.id === created.id);
    expect(listed).toEqual({
      id: created.id,
      name: 'listed',
      prefix: created.prefix,
      created_at: created.created_at,
    });
    for (const key of res.body.results) {
      expect(Object.keys(key).sort()).toEqual(['created_at', 'id', 'name', 'prefix']);
    }
    expect(res.text).not.toContain(created.key);
    expect(res.text).not.toContain(hashApiKey(created.key));
    expect(res.text).not.toContain(ADMIN_KEY);
  });

  it('shows each user only their own keys', async () => {
    const adminKey = await createKey(ADMIN_KEY, 'admin only');
    const readerKey = await createKey(reader.key, 'reader only');
    const readerList = await t.request('GET', '/api/v2/apikey', { key: reader.key });
    const readerIds = readerList.body.results.map((key: { id: string }) => key.id);
    expect(readerIds).toContain(readerKey.id);
    expect(readerIds).not.toContain(adminKey.id);
    const adminList = await t.request('GET', '/api/v2/apikey');
    expect(adminList.body.results.map((key: { id: string }) => key.id)).not.toContain(readerKey.id);
  });
});

describe('DELETE /api/v1/apikey/{id}', () => {
  it('revokes a key, which is refused at once even though it was cached', async () => {
    const created = await createKey(ADMIN_KEY, 'to revoke');
    expect((await t.request('GET', '/api/v1/user/me', { key: created.key })).status).toBe(200);
    // The successful call above left the key in the cache: revocation has to beat it.
    expect(t.ctx.apiKeyCache.get(hashApiKey(created.key), t.ctx.clock.now())).toBeDefined();

    const res = await t.request('DELETE', `/api/v1/apikey/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: created.id, message: expect.any(String), status: 'SUCCESS' });

    expectError(await t.request('GET', '/api/v1/user/me', { key: created.key }), 401, 'UNAUTHORIZED');
    expectError(await t.request('GET', '/api/v2/apikey', { key: created.key }), 401, 'UNAUTHORIZED');
    const list = await t.request('GET', '/api/v2/apikey');
    expect(list.body.results.map((key: { id: string }) => key.id)).not.toContain(created.id);
  });

  it('lets a key revoke itself', async () => {
    const created = await createKey(reader.key, 'self');
    const res = await t.request('DELETE', `/api/v1/apikey/${created.id}`, { key: created.key });
    expect(res.status).toBe(200);
    expectError(await t.request('GET', '/api/v2/apikey', { key: created.key }), 401, 'UNAUTHORIZED');
    expect((await t.request('GET', '/api/v2/apikey', { key: reader.key })).status).toBe(200);
  });

  it('answers 404 for a key already revoked', async () => {
    const created = await createKey();
    expect((await t.request('DELETE', `/api/v1/apikey/${created.id}`)).status).toBe(200);
    expectError(await t.request('DELETE', `/api/v1/apikey/${created.id}`), 404, 'NOT_FOUND');
  });

  it('revokes once when two revocations of one key arrive together: one 200, one 404', async () => {
    const created = await createKey(ADMIN_KEY, 'revoked twice');
    expect((await t.request('GET', '/api/v1/user/me', { key: created.key })).status).toBe(200);
    const answers = await Promise.all([
      t.request('DELETE', `/api/v1/apikey/${created.id}`),
      t.request('DELETE', `/api/v1/apikey/${created.id}`),
    ]);
    expect(answers.map((res) => res.status).sort()).toEqual([200, 404]);
    expectError(
      answers.find((res) => res.status === 404)!,
      404,
      'NOT_FOUND',
    );
    expectError(await t.request('GET', '/api/v1/user/me', { key: created.key }), 401, 'UNAUTHORIZED');
  });

  it("answers 404 for another user's key and leaves it working", async () => {
    const readerKey = await createKey(reader.key, 'not yours');
    expectError(await t.request('DELETE', `/api/v1/apikey/${readerKey.id}`), 404, 'NOT_FOUND');
    const adminKey = await createKey();
    expectError(
      await t.request('DELETE', `/api/v1/apikey/${adminKey.id}`, { key: reader.key }),
      404,
      'NOT_FOUND',
    );
    expect((await t.request('GET', '/api/v1/user/me', { key: readerKey.key })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/user/me', { key: adminKey.key })).status).toBe(200);
  });

  it('answers 404 for an unknown id and 400 for an id longer than any id can be', async () => {
    expectError(
      await t.request('DELETE', '/api/v1/apikey/01900000-0000-7000-8000-000000000000'),
      404,
      'NOT_FOUND',
    );
    expectError(await t.request('DELETE', `/api/v1/apikey/${'x'.repeat(65)}`), 400, 'BAD_REQUEST');
  });
});

describe('the key cache and revocation', () => {
  it('drops an entry whose lookup started before an invalidation', () => {
    const cache = new ApiKeyCache();
    const actor = {
      userId: 'u1',
      name: 'User',
      email: 'u1@example.com',
      orgId: 'o1',
      roleIds: ['read_only'],
      permissions: new Set<never>(),
      apiKeyId: 'k1',
    };
    const before = cache.snapshot();
    cache.invalidateKey('hash-of-k1');
    cache.set('hash-of-k1', actor, 0, before);
    expect(cache.get('hash-of-k1', 1)).toBeUndefined();
    cache.set('hash-of-k1', actor, 0, cache.snapshot());
    expect(cache.get('hash-of-k1', 1)).toBe(actor);
    expect(cache.get('hash-of-k1', 10_000)).toBeUndefined();
  });
});
