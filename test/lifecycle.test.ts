import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { bootstrap } from '../src/features/bootstrap/service.js';
import { createLogger } from '../src/observability/logger.js';
import { closeContext, openContext } from '../src/runtime.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { serviceEnv } from './support/service-env.js';
import { bounded, runToEnd, Server, STOP_TIMEOUT_MS, type LogLine } from './support/service-process.js';

/** A POST whose body is sent in two halves: the second only when `finish` is called. */
function slowPost(url: string, key: string, body: unknown) {
  const text = JSON.stringify(body);
  const half = Math.floor(text.length / 2);
  const req = http.request(url, {
    method: 'POST',
    headers: {
      'x-api-key': key,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
    },
  });
  const response = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.once('error', reject);
  });
  req.write(text.slice(0, half));
  return { response, finish: () => req.end(text.slice(half)) };
}

const servers: Server[] = [];
const databases: TestDatabase[] = [];

async function start(env: Record<string, string>): Promise<Server> {
  const server = new Server(env);
  servers.push(server);
  return server.started();
}

async function freshEnv(): Promise<Record<string, string>> {
  const database = await createTestDatabase();
  databases.push(database);
  return serviceEnv(database);
}

async function me(server: Server, key: string) {
  const res = await server.fetch('/api/v1/user/me', key);
  return { status: res.status, body: (await res.json()) as { email?: string } };
}

afterAll(async () => {
  for (const server of servers) server.kill();
  await Promise.all(servers.map((server) => bounded(server.exited, STOP_TIMEOUT_MS, 'exit after SIGKILL')));
  for (const database of databases) await database.drop();
});

describe('first start, graceful stop and restart', () => {
  let env: Record<string, string>;
  let adminKey: string;

  beforeAll(async () => {
    env = await freshEnv();
  });

  it('prints the admin key once at first start, and it works over HTTP', { timeout: 60_000 }, async () => {
    const server = await start(env);
    const keys = server.printedKeys();
    expect(keys).toHaveLength(1);
    adminKey = keys[0]!;
    expect(adminKey.length).toBeGreaterThanOrEqual(43);
    expect(server.output.join('\n').split(adminKey)).toHaveLength(2);
    const res = await me(server, adminKey);
    expect(res.status).toBe(200);
    expect(res.body.email).toBe('admin@edgewatch.local');
    expect((await me(server, `${adminKey}x`)).status).toBe(401);
    expect(await server.stop()).toBe(0);
  });

  it('finishes in-flight requests on SIGTERM, then exits 0', { timeout: 90_000 }, async () => {
    // At debug, each request's arrival is logged too.
    const server = await start({ ...env, LOG_LEVEL: 'debug' });
    expect(server.printedKeys()).toEqual([]);
    const newUser = (label: string) => ({
      name: `Shutdown ${label}`,
      email: `shutdown-${label}-${randomBytes(3).toString('hex')}@example.com`,
      password: 'a-long-password',
      roles: ['read_only'],
    });
    const isUserPost = (l: LogLine) => l.msg === 'incoming request' && l.req?.url === '/api/v1/user';

    // A slow client: headers and half the body are sent, so this request is under way at the signal.
    const slowUser = newUser('slow');
    const slow = slowPost(`${server.baseUrl}/api/v1/user`, adminKey, slowUser);
    await server.waitFor('the slow request', isUserPost);
    // Ordinary slow work in flight as well: adding a user hashes its password (Argon2id, 19 MiB).
    const users = Array.from({ length: 12 }, (_, i) => newUser(String(i)));
    const batch = users.map((user) => server.fetch('/api/v1/user', adminKey, user));
    await server.waitFor(
      'every request arriving',
      () => server.lines.filter(isUserPost).length === users.length + 1,
    );

    const exit = server.stop();
    const signalled = await server.waitFor('the signal', (l) => /SIGTERM received/.test(l.msg ?? ''));
    slow.finish();
    const answer = await bounded(slow.response, STOP_TIMEOUT_MS, 'answer to the slow request');
    expect(answer.status).toBe(201);
    // The connection is closed with the answer, so a keep-alive client cannot hold the process open.
    expect(answer.connection).toBe('close');
    const statuses = await Promise.all(batch.map(async (res) => (await res).status));
    expect(statuses).toEqual(users.map(() => 201));
    expect(await exit).toBe(0);
    const slowId = server.lines.find(isUserPost)!.reqId;
    const completed = server.lines.findIndex((l) => l.msg === 'request completed' && l.reqId === slowId);
    expect(completed).toBeGreaterThan(server.lines.indexOf(signalled));

    // The users were written: after a restart they exist (unverified, so login says 403, not 401).
    const again = await start(env);
    for (const user of [slowUser, ...users.slice(0, 2)]) {
      const login = await again.fetch('/api/v1/auth/login', null, {
        email: user.email,
        password: user.password,
      });
      expect(login.status).toBe(403);
    }
    expect(await again.stop()).toBe(0);
  });

  it('prints no new key on a later start, and the first key still works', { timeout: 60_000 }, async () => {
    const server = await start(env);
    expect(server.printedKeys()).toEqual([]);
    expect(server.output.join('\n')).not.toContain(adminKey);
    expect((await me(server, adminKey)).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  it(
    'adds BOOTSTRAP_API_KEY to an existing database once, across restarts',
    { timeout: 90_000 },
    async () => {
      const preset = `ew_${randomBytes(32).toString('base64url')}`;
      for (let run = 0; run < 2; run += 1) {
        const server = await start({ ...env, BOOTSTRAP_API_KEY: preset });
        expect(server.printedKeys()).toEqual([]);
        expect(server.output.join('\n')).not.toContain(preset);
        expect((await me(server, preset)).status).toBe(200);
        expect((await me(server, adminKey)).status).toBe(200);
        const list = await server.fetch('/api/v2/apikey', preset);
        const names = ((await list.json()) as { results: { name: string }[] }).results.map((k) => k.name);
        expect(names.filter((n) => n === 'Bootstrap')).toHaveLength(2);
        expect(await server.stop()).toBe(0);
      }
    },
  );
});

describe('first start with BOOTSTRAP_API_KEY', () => {
  it(
    'installs the given key, prints none, and creates no duplicate on restart',
    { timeout: 90_000 },
    async () => {
      const env = { ...(await freshEnv()), BOOTSTRAP_API_KEY: `ew_${randomBytes(32).toString('base64url')}` };
      const key = env.BOOTSTRAP_API_KEY;
      for (let run = 0; run < 2; run += 1) {
        const server = await start(env);
        expect(server.printedKeys()).toEqual([]);
        expect(server.output.join('\n')).not.toContain(key);
        expect((await me(server, key)).status).toBe(200);
        const list = await server.fetch('/api/v2/apikey', key);
        expect(((await list.json()) as { results: unknown[] }).results).toHaveLength(1);
        expect(await server.stop()).toBe(0);
      }
    },
  );
});

describe('several instances bootstrapping one database at once', () => {
  it('all start, leaving one organization, one admin and each key once', async () => {
    const presets = [1, 2].map(() => `ew_${randomBytes(32).toString('base64url')}`);
    const config = loadConfig({ ...(await freshEnv()), LOG_LEVEL: 'silent' });
    const ctx = await openContext(config, createLogger('silent'));
    try {
      const instances = [1, 2, 3];
      // With PostgreSQL these run in parallel transactions, as separate instances would.
      const first = await Promise.all(instances.map(() => bootstrap(ctx, { presetKey: presets[0] })));
      expect(first.map((r) => r.kind).sort()).toEqual(['created', 'unchanged', 'unchanged']);
      const second = await Promise.all(instances.map(() => bootstrap(ctx, { presetKey: presets[1] })));
      expect(second.map((r) => r.kind).sort()).toEqual(['preset-key-added', 'unchanged', 'unchanged']);
      const count = async (table: 'organizations' | 'users' | 'api_keys') =>
        Number(
          (
            await ctx.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number | string>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      expect(await count('organizations')).toBe(1);
      expect(await count('users')).toBe(1);
      expect(await count('api_keys')).toBe(2);
    } finally {
      await closeContext(ctx);
    }
  });
});

describe('one-shot commands of the real program', () => {
  it('end by themselves with the right exit code', { timeout: 90_000 }, async () => {
    const env = { ...(await freshEnv()), LOG_LEVEL: 'warn' };
    const migrate = await runToEnd(['migrate'], env);
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout).toMatch(/^Applied: 0001_foundation/);
    const init = await runToEnd(['init'], env);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/Admin API key \(shown once\): \S{43,}/);
    const again = await runToEnd(['init'], env);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe('Already initialized: the database has an organization.');
    const help = await runToEnd(['apikey', 'create', '--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: edgewatch apikey create');
    const invalid = await runToEnd(['serve'], { ...env, PORT: 'abc' });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr.trim().split('\n')).toEqual([expect.stringContaining('PORT')]);
  });
});
