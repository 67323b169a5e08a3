import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { CommitGroup } from './db/commit-group.js';
import { logCommitHooksTo } from './db/transaction.js';
import { connectDatabase, isPostgres, type ConnectOptions } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { ApiKeyCache } from './features/apikeys/key-cache.js';
import { systemClock, type Clock } from './lib/clock.js';
import { registerJobMetrics } from './jobs/metrics.js';
import { registerAlertMetrics } from './features/notifications/metrics.js';
import { JobQueue } from './jobs/queue.js';
import { Mailer } from './mail/mailer.js';
import { createRegistry } from './observability/metrics.js';
import { loadSecretKey, SecretBox } from './lib/secret-box.js';
import { VersionedCache } from './lib/versioned-cache.js';
import { parseNetworks } from './net/addresses.js';
import { OutboundClient } from './net/outbound.js';

export const USER_AGENT = 'edgewatch-webhooks/0.1';
/** Shared transactions open at once on PostgreSQL: some of the pool, the rest for everything else. */
const COMMIT_GROUPS_POSTGRES = 4;

export interface OpenOptions extends ConnectOptions {
  clock?: Clock;
  migrate?: boolean;
  /** PEM certificates trusted for webhook calls in addition to the system roots (tests' own CA). */
  extraTrustedCertificates?: string[];
}

/** Connects, migrates and wires the shared context that the API, the worker and the CLI all use. */
export async function openContext(
  config: Config,
  logger: Logger,
  options: OpenOptions = {},
): Promise<AppContext> {
  const db = connectDatabase(config.database, {
    ...options,
    onIdleError: (error) =>
      logger.warn({ err: error }, 'a database connection was dropped; it will be reopened'),
  });
  try {
    if (options.migrate !== false) await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const clock = options.clock ?? systemClock;
  logCommitHooksTo(db, logger);
  const jobs = new JobQueue(db, clock);
  const mailer = new Mailer({ db, clock, logger, jobs, smtpUrl: config.smtpUrl });
  const metrics = createRegistry();
  const webhookClient = new OutboundClient({
    allowedNetworks: config.webhookAllowedNetworks,
    userAgent: USER_AGENT,
    ...(options.extraTrustedCertificates === undefined
      ? {}
      : { extraTrustedCertificates: options.extraTrustedCertificates }),
  });
  return {
    db,
    commits: new CommitGroup(db, { open: isPostgres(db) ? COMMIT_GROUPS_POSTGRES : 1, maxUnits: 64 }),
    config,
    clock,
    logger,
    mailer,
    jobs,
    metrics,
    jobMetrics: registerJobMetrics(metrics, db, clock),
    alertMetrics: registerAlertMetrics(metrics, db, clock),
    apiKeyCache: new ApiKeyCache(),
    secretBox: new SecretBox(loadSecretKey(config)),
    webhookClient,
    listCache: new VersionedCache(),
    allowedNetworks: parseNetworks(config.webhookAllowedNetworks),
  };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  ctx.mailer.close();
  await ctx.webhookClient.close();
  await ctx.db.destroy();
}
