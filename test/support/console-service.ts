import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { createLogger } from '../../src/observability/logger.js';
import { closeContext, openContext } from '../../src/runtime.js';
import { assertConsoleBuilt, launchBrowser } from './browser.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { serviceDatabaseUrl } from './service-env.js';
import { Server, STOP_TIMEOUT_MS } from './service-process.js';

/**
 * `edgewatch serve` in its own process on a fresh database, with a known admin key; a browser; and a
 * context of the test's own on the same database, for a past the API cannot make (history, old events).
 */
export interface ConsoleService {
  server: Server;
  browser: Browser;
  ctx: AppContext;
  adminKey: string;
  /** The API as the admin: GET without a body, POST with one; any answer but a 2xx fails the test. */
  call(path: string, body?: unknown): Promise<Record<string, any>>;
  close(): Promise<void>;
}

export async function startConsoleService(
  name: string,
  env: Record<string, string>,
): Promise<ConsoleService> {
  assertConsoleBuilt();
  const database: TestDatabase = await createTestDatabase();
  const adminKey = `ew_${name}_${randomBytes(24).toString('base64url')}`;
  const serviceEnv = {
    DATABASE_URL: serviceDatabaseUrl(database),
    BOOTSTRAP_API_KEY: adminKey,
    ...(database.schema === undefined ? {} : { SECRET_KEY: randomBytes(32).toString('hex') }),
    ...env,
  };
  const server = new Server(serviceEnv);
  const [, browser] = await Promise.all([server.started(), launchBrowser()]);
  const ctx = await openContext(
    loadConfig({ ...serviceEnv, DATABASE_URL: database.url, LOG_LEVEL: 'warn' }),
    createLogger('warn', process.stderr),
    database.schema === undefined ? {} : { schema: database.schema },
  );
  return {
    server,
    browser,
    ctx,
    adminKey,
    async call(path, body) {
      const res = await fetch(server.baseUrl + path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          'x-api-key': adminKey,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
      });
      expect(res.status, path).toBeLessThan(300);
      return (await res.json()) as Record<string, any>;
    },
    async close() {
      await browser.close();
      await closeContext(ctx);
      if (server.running) expect(await server.stop()).toBe(0);
      await database.drop();
    },
  };
}
