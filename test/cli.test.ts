import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { runCli, type CliIo } from '../src/cli/program.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/observability/logger.js';
import { closeContext, openContext } from '../src/runtime.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { serviceEnv } from './support/service-env.js';
import { startSmtpSink } from './support/smtp-sink.js';

interface Run {
  code: number;
  out: string[];
  err: string[];
}

async function cli(argv: string[], env: Record<string, string | undefined>): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (line) => out.push(line), err: (line) => err.push(line), env };
  const code = await runCli(argv, io);
  return { code, out, err };
}

const databases: TestDatabase[] = [];

/** A fresh database and the environment that points the CLI at it. */
async function freshEnv(): Promise<Record<string, string>> {
  const database = await createTestDatabase();
  databases.push(database);
  return { ...serviceEnv(database), LOG_LEVEL: 'error' };
}

/** Calls the API on the database the CLI wrote to, as `serve` would. */
async function callApi(
  env: Record<string, string>,
  url: string,
  key: string | null,
  request: { method?: 'GET' | 'POST'; body?: object } = {},
) {
  const config = loadConfig(env);
  const ctx = await openContext(config, createLogger('silent'));
  const app = await buildApp(ctx);
  try {
    const res = await app.inject({
      method: request.method ?? 'GET',
      url,
      headers: key === null ? {} : { 'x-api-key': key },
      ...(request.body === undefined ? {} : { payload: request.body }),
    });
    return { status: res.statusCode, body: res.json() };
  } finally {
    await app.close();
    await closeContext(ctx);
  }
}

function keyIn(lines: string[]): string {
  const match = /\(shown once\): (\S+)$/.exec(lines.join('\n'));
  if (match?.[1] === undefined) throw new Error(`no key printed: ${lines.join('\n')}`);
  return match[1];
}

afterEach(() => {
  process.exitCode = undefined;
});
afterAll(async () => {
  for (const database of databases) await database.drop();
});

describe('migrate', () => {
  it('applies the migrations once, then says the database is up to date', async () => {
    const env = await freshEnv();
    const first = await cli(['migrate'], env);
    expect(first.code, first.err.join('\n')).toBe(0);
    expect(first.out.join('\n')).toMatch(/^Applied: 0001_foundation/);
    const second = await cli(['migrate'], env);
    expect(second.code).toBe(0);
    expect(second.out).toEqual(['Database is up to date.']);
  });

  it('migrates a new database while another one beside it is already migrated', async () => {
    const a = await freshEnv();
    const b = await freshEnv();
    expect((await cli(['migrate'], a)).code).toBe(0);
    const res = await cli(['migrate'], b);
    expect(res.code, res.err.join('\n')).toBe(0);
    expect(res.out.join('\n')).toMatch(/^Applied: 0001_foundation/);
  });
});

describe('init', () => {
  it('creates the organization and admin, and prints a key that works in the API', async () => {
    const env = await freshEnv();
    const res = await cli(['init'], env);
    expect(res.code, res.err.join('\n')).toBe(0);
    expect(res.out[0]).toBe('Created organization "Root organization" and admin admin@edgewatch.local.');
    const key = keyIn(res.out);
    expect(key.length).toBeGreaterThanOrEqual(43);
    const me = await callApi(env, '/api/v1/user/me', key);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      email: 'admin@edgewatch.local',
      name: 'Administrator',
      org: { name: 'Root organization' },
      roles: [{ id: 'admin', name: 'Admin' }],
    });
  });

  it('takes the organization, e-mail and name from options', async () => {
    const env = await freshEnv();
    const res = await cli(['init', '--org', 'Acme', '--email', 'ops@acme.test', '--name', 'Ops Lead'], env);
    expect(res.code, res.err.join('\n')).toBe(0);
    const me = await callApi(env, '/api/v1/user/me', keyIn(res.out));
    expect(me.body).toMatchObject({ email: 'ops@acme.test', name: 'Ops Lead', org: { name: 'Acme' } });
  });

  it('refuses a second time with exit code 1 and one clear line, leaving the first key working', async () => {
    const env = await freshEnv();
    const first = await cli(['init'], env);
    const key = keyIn(first.out);
    const second = await cli(['init', '--org', 'Another'], env);
    expect(second.code).toBe(1);
    expect(second.out).toEqual([]);
    expect(second.err).toEqual(['Already initialized: the database has an organization.']);
    const orgs = await callApi(env, '/api/v2/org', key);
    expect(orgs.status).toBe(200);
    expect(orgs.body.results.map((org: { name: string }) => org.name)).toEqual(['Root organization']);
  });

  it('installs BOOTSTRAP_API_KEY as the admin key when it is set', async () => {
    const preset = `ew_preset-${'p'.repeat(40)}`;
    const env = { ...(await freshEnv()), BOOTSTRAP_API_KEY: preset };
    const res = await cli(['init'], env);
    expect(res.code).toBe(0);
    expect(keyIn(res.out)).toBe(preset);
    expect((await callApi(env, '/api/v1/user/me', preset)).status).toBe(200);
  });
});

describe('apikey create', () => {
  it('prints a new working key for a user, found by e-mail in any case, under the given name', async () => {
    const env = await freshEnv();
    const adminKey = keyIn((await cli(['init'], env)).out);
    const res = await cli(['apikey', 'create', '--email', 'ADMIN@edgewatch.local', '--name', 'ci'], env);
    expect(res.code, res.err.join('\n')).toBe(0);
    expect(res.out[0]).toMatch(/^API key for admin@edgewatch\.local \(shown once\): /);
    const key = keyIn(res.out);
    expect(key).not.toBe(adminKey);
    expect((await callApi(env, '/api/v1/user/me', key)).body.email).toBe('admin@edgewatch.local');
    const list = await callApi(env, '/api/v2/apikey', key);
    expect(list.body.results.map((k: { name: string }) => k.name)).toContain('ci');
  });

  it('fails with exit code 1 for an unknown e-mail address', async () => {
    const env = await freshEnv();
    await cli(['init'], env);
    const res = await cli(['apikey', 'create', '--email', 'nobody@example.com'], env);
    expect(res.code).toBe(1);
    expect(res.out).toEqual([]);
    expect(res.err).toEqual(['No user with the e-mail address nobody@example.com.']);
  });

  it('fails with exit code 1 without --email', async () => {
    const res = await cli(['apikey', 'create'], await freshEnv());
    expect(res.code).toBe(1);
    expect(res.err[0]).toBe("error: required option '--email <email>' not specified");
    expect(res.err.join('\n')).toContain('Usage: edgewatch apikey create');
  });
});

describe('user resend-verification', () => {
  /** An initialized database with one user who has not verified their address yet. */
  async function withUnverifiedUser(extraEnv: Record<string, string> = {}) {
    const env = { ...(await freshEnv()), ...extraEnv };
    const adminKey = keyIn((await cli(['init'], env)).out);
    const created = await callApi(env, '/api/v1/user', adminKey, {
      method: 'POST',
      body: {
        name: 'Late Reader',
        email: 'Late.Reader@example.com',
        password: 'first-password',
        roles: ['operator'],
      },
    });
    expect(created.status).toBe(201);
    return env;
  }

  it('prints a new working link when no SMTP server is configured', async () => {
    const env = await withUnverifiedUser();
    const res = await cli(['user', 'resend-verification', '--email', 'late.reader@EXAMPLE.com'], env);
    expect(res.code, res.err.join('\n')).toBe(0);
    const link = /: (http\S+\/api\/v1\/user\/verify-email\?token=\S+)$/.exec(res.out.join('\n'))?.[1];
    expect(link, res.out.join('\n')).toBeDefined();
    expect(res.out[0]).toContain('Late.Reader@example.com');
    const verified = await callApi(env, new URL(link ?? '').pathname + new URL(link ?? '').search, null);
    expect(verified.status).toBe(200);
    const again = await cli(['user', 'resend-verification', '--email', 'late.reader@example.com'], env);
    expect(again).toEqual({
      code: 1,
      out: [],
      err: ['late.reader@example.com: This e-mail address is already verified.'],
    });
  });

  it('sends the link by e-mail when an SMTP server is configured', async () => {
    const sink = await startSmtpSink();
    try {
      const env = await withUnverifiedUser({ SMTP_URL: sink.url });
      const res = await cli(['user', 'resend-verification', '--email', 'late.reader@example.com'], env);
      expect(res.code, res.err.join('\n')).toBe(0);
      expect(res.out).toEqual([
        'A new verification link is on its way to Late.Reader@example.com (it works once, for 24 hours).',
      ]);
      await sink.waitFor((mail) => mail.to.includes('Late.Reader@example.com'));
      const last = sink.messages.filter((mail) => mail.to.includes('Late.Reader@example.com')).at(-1);
      const path = /\/api\/v1\/user\/verify-email\?token=\S+/.exec(last?.text ?? '')?.[0];
      expect(path, last?.text).toBeDefined();
      expect((await callApi(env, path ?? '', null)).status).toBe(200);
    } finally {
      await sink.close();
    }
  });

  it('fails with exit code 1 for an unknown e-mail address', async () => {
    const env = await withUnverifiedUser();
    const res = await cli(['user', 'resend-verification', '--email', 'nobody@example.com'], env);
    expect(res).toEqual({ code: 1, out: [], err: ['No user with the e-mail address nobody@example.com.'] });
  });
});

describe('help and usage errors', () => {
  const commands: { argv: string[]; describes: RegExp }[] = [
    { argv: [], describes: /Users, roles, API keys/ },
    { argv: ['serve'], describes: /Run the HTTP API and the background worker/ },
    { argv: ['migrate'], describes: /Apply pending database migrations/ },
    { argv: ['init'], describes: /Create the root organization and the admin user/ },
    { argv: ['apikey'], describes: /Manage API keys/ },
    { argv: ['apikey', 'create'], describes: /Create an API key for a user/ },
    { argv: ['user'], describes: /Manage users/ },
    { argv: ['user', 'resend-verification'], describes: /new verification link/ },
  ];

  it.each(commands)(
    'edgewatch $argv --help exits 0 and describes the command',
    async ({ argv, describes }) => {
      const res = await cli([...argv, '--help'], {});
      expect(res.code).toBe(0);
      const text = res.out.join('\n');
      expect(text).toContain(`Usage: ${['edgewatch', ...argv].join(' ')}`);
      expect(text).toMatch(describes);
      expect(res.err).toEqual([]);
    },
  );

  it('lists the options of init and apikey create', async () => {
    const init = (await cli(['init', '--help'], {})).out.join('\n');
    for (const option of ['--org', '--email', '--name']) expect(init).toContain(option);
    expect((await cli(['apikey', 'create', '--help'], {})).out.join('\n')).toContain('--email <email>');
  });

  it.each(['bogus', 'init --bogus', 'apikey rotate'])(
    'edgewatch %s exits 1 with a usage error',
    async (command) => {
      const res = await cli(command.split(' '), {});
      expect(res.code).toBe(1);
      expect(res.err[0]).toMatch(/^error: unknown (command|option) '(bogus|--bogus|rotate)'/);
      expect(res.err.join('\n')).toContain('Usage: edgewatch');
    },
  );
});

describe('invalid configuration', () => {
  const cases: { argv: string[]; env: Record<string, string>; variable: string }[] = [
    { argv: ['migrate'], env: { PORT: 'abc' }, variable: 'PORT' },
    { argv: ['migrate'], env: { DATABASE_URL: 'mysql://x' }, variable: 'DATABASE_URL' },
    { argv: ['init'], env: { LOG_LEVEL: 'loud' }, variable: 'LOG_LEVEL' },
    { argv: ['apikey', 'create', '--email', 'a@b.c'], env: { SMTP_URL: 'http://x' }, variable: 'SMTP_URL' },
    { argv: ['serve'], env: { MAX_WEBHOOKS_PER_USER: '-1' }, variable: 'MAX_WEBHOOKS_PER_USER' },
  ];

  it.each(cases)(
    'edgewatch $argv with $variable invalid exits 1 naming it',
    async ({ argv, env, variable }) => {
      const res = await cli(argv, { ...(await freshEnv()), ...env });
      expect(res.code).toBe(1);
      expect(res.err).toHaveLength(1);
      expect(res.err[0]).toContain(variable);
      expect(res.out).toEqual([]);
    },
  );
});
