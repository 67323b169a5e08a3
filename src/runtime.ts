import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { connectDatabase, type ConnectOptions } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { ApiKeyCache } from './features/apikeys/key-cache.js';
import { systemClock, type Clock } from './lib/clock.js';
import { Mailer } from './mail/mailer.js';

export interface OpenOptions extends ConnectOptions {
  clock?: Clock;
  migrate?: boolean;
}

/** Connects, migrates and wires the shared context that the API, the worker and the CLI all use. */
export async function openContext(
  config: Config,
  logger: Logger,
  options: OpenOptions = {},
): Promise<AppContext> {
  const db = connectDatabase(config.database, options);
  try {
    if (options.migrate !== false) await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const clock = options.clock ?? systemClock;
  const mailer = new Mailer({ db, clock, logger, smtpUrl: config.smtpUrl });
  return { db, config, clock, logger, mailer, apiKeyCache: new ApiKeyCache() };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.mailer.close();
  await ctx.db.destroy();
}
