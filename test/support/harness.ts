import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { bootstrap } from '../../src/features/bootstrap/service.js';
import type { App } from '../../src/http/types.js';
import { createLogger } from '../../src/observability/logger.js';
import { closeContext, openContext } from '../../src/runtime.js';
import { countJobs } from '../../src/jobs/repo.js';
import type { Worker } from '../../src/jobs/worker.js';
import type { Dispatcher, DispatchPauses } from '../../src/features/deliveries/dispatcher.js';
import { listOutbox } from '../../src/mail/repo.js';
import { createBackground, type Background } from '../../src/background.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export { dialect } from './database.js';

export const ADMIN_KEY = 'ew_test-admin-key-0123456789abcdefghijklmnopqrstuv';

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Raw payload, sent as is (for malformed-body tests). */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** The client address the service sees (login limits count per address). */
  remoteAddress?: string;
}

export interface TestApp {
  app: App;
  ctx: AppContext;
  config: Config;
  database: TestDatabase;
  /** Every line the service logged, as text (for redaction checks). */
  logs: string[];
  /** The in-process job worker, as `serve` runs it. */
  worker: Worker;
  /** The in-process delivery dispatcher, as `serve` runs it (not started with `background: false`). */
  dispatcher: Dispatcher;
  /** Resolves once no job is due or running (what the work caused so far has been done or rescheduled). */
  jobsSettled(): Promise<void>;
  request(method: InjectOptions['method'], url: string, options?: RequestOptions): Promise<TestResponse>;
  /** Adds a user through the API, verifies the e-mail, logs in with a password change: the real path. */
  userWithRoles(
    roles: string[],
    orgId?: string,
  ): Promise<{ id: string; email: string; key: string; password: string }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** false: neither the job worker nor the dispatcher runs by itself; the test drives them (runDue). */
  background?: false;
  /** Test seams in the dispatcher's runs. */
  pauses?: DispatchPauses;
  /** PEM certificates the webhook client trusts besides the system roots (the test CA). */
  extraTrustedCertificates?: string[];
}

/** The service on a fresh database of the dialect under test, bootstrapped with ADMIN_KEY. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: database.url,
    SECRET_KEY: randomBytes(32).toString('hex'),
    BOOTSTRAP_API_KEY: ADMIN_KEY,
    PUBLIC_URL: 'http://edgewatch.test',
    LOG_LEVEL: 'info',
    ...options.env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const ctx = await openContext(config, logger, {
    ...(database.schema === undefined ? {} : { schema: database.schema }),
    ...(options.extraTrustedCertificates === undefined
      ? {}
      : { extraTrustedCertificates: options.extraTrustedCertificates }),
  });
  await bootstrap(ctx, { presetKey: ADMIN_KEY });
  const app = await buildApp(ctx);
  await app.ready();
  const background: Background = createBackground(ctx, options.pauses ? { pauses: options.pauses } : {});
  const { worker, dispatcher } = background;
  if (options.background !== false) await background.start();

  const jobsSettled = async () => {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const counts = await countJobs(ctx.db, ctx.clock.now());
      const busy = counts.some((row) => row.state === 'due' || row.state === 'running');
      if (!busy && !(await deliveriesUnderWay(ctx))) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error('jobs or deliveries still due or running after 15 s');
  };

  const request: TestApp['request'] = async (method, url, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? ADMIN_KEY : opts.key;
    if (key !== null) headers['x-api-key'] = key;
    let payload: string | Buffer | undefined = opts.payload;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await app.inject({
      method,
      url,
      headers,
      query: opts.query,
      remoteAddress: opts.remoteAddress ?? '127.0.0.1',
      ...(payload === undefined ? {} : { payload }),
    });
    let body: unknown;
    try {
      body = response.body === '' ? undefined : JSON.parse(response.body);
    } catch {
      body = undefined;
    }
    return { status: response.statusCode, headers: response.headers, body, text: response.body };
  };

  let counter = 0;
  const userWithRoles: TestApp['userWithRoles'] = async (roles, orgId) => {
    counter += 1;
    const email = `user${counter}-${randomBytes(3).toString('hex')}@example.com`;
    const password = 'initial-password';
    const created = await request('POST', '/api/v1/user', {
      body: {
        name: `User ${counter}`,
        email,
        password,
        roles,
        ...(orgId === undefined ? {} : { org_id: orgId }),
      },
    });
    if (created.status !== 201) throw new Error(`user creation failed: ${created.text}`);
    const token = await latestVerificationToken(ctx, email);
    const verified = await request('GET', `/api/v1/user/verify-email?token=${token}`, { key: null });
    if (verified.status !== 200) throw new Error(`verification failed: ${verified.text}`);
    const newPassword = 'changed-password';
    const login = await request('POST', '/api/v1/auth/login', {
      key: null,
      remoteAddress: `198.51.100.${counter % 250}`,
      body: { email, password, new_password: newPassword },
    });
    if (login.status !== 200) throw new Error(`login failed: ${login.text}`);
    return { id: created.body.id as string, email, key: login.body.api_key as string, password: newPassword };
  };

  return {
    app,
    ctx,
    config,
    database,
    logs,
    worker,
    dispatcher,
    jobsSettled,
    request,
    userWithRoles,
    async close() {
      await background.stop(1_000);
      await app.close();
      await closeContext(ctx);
      await database.drop();
    },
  };
}

/** Whether a webhook delivery is in flight, or due now at an open gate. */
async function deliveriesUnderWay(ctx: AppContext): Promise<boolean> {
  const now = ctx.clock.now();
  const row = await ctx.db
    .selectFrom('deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .select('deliveries.id')
    .where('deliveries.status', '=', 'pending')
    .where((eb) =>
      eb.or([
        eb('deliveries.lease_until', '>', now),
        eb.and([
          eb('deliveries.next_attempt_at', '<=', now),
          eb('webhooks.is_enabled', '=', 1),
          eb.or([eb('webhooks.retry_at', 'is', null), eb('webhooks.retry_at', '<=', now)]),
        ]),
      ]),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The token of the newest verification e-mail to an address, read from the outbox. */
export async function latestVerificationToken(ctx: AppContext, email: string): Promise<string> {
  const rows = (await listOutbox(ctx.db)).filter((row) => row.recipient === email);
  const text = rows.at(-1)?.body_text ?? '';
  const match = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(text);
  if (match?.[1] === undefined) throw new Error(`no verification e-mail for ${email}`);
  return match[1];
}
