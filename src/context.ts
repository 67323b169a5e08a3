import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from './config.js';
import type { CommitGroup } from './db/commit-group.js';
import type { Db } from './db/types.js';
import type { AlertMetrics } from './features/notifications/metrics.js';
import type { Clock } from './lib/clock.js';
import type { JobMetrics } from './jobs/metrics.js';
import type { JobQueue } from './jobs/queue.js';
import type { Mailer } from './mail/mailer.js';
import type { ApiKeyCache } from './features/apikeys/key-cache.js';
import type { Permission } from './features/roles/catalog.js';
import type { SecretBox } from './lib/secret-box.js';
import type { VersionedCache } from './lib/versioned-cache.js';
import type { Network } from './net/addresses.js';
import type { OutboundClient } from './net/outbound.js';

/** Everything a service may need, built once at start and shared by the API, the worker and the CLI. */
export interface AppContext {
  db: Db;
  /** Group commit for the small, frequent write transactions of the API (agents' reports). */
  commits: CommitGroup;
  config: Config;
  clock: Clock;
  logger: Logger;
  mailer: Mailer;
  /** The job queue: the background work other than webhook deliveries, enqueued in its cause's transaction. */
  jobs: JobQueue;
  /** The process's Prometheus registry (served at /metrics by the API role). */
  metrics: Registry;
  jobMetrics: JobMetrics;
  /** Events, notifications and deliveries as they pass. */
  alertMetrics: AlertMetrics;
  apiKeyCache: ApiKeyCache;
  /** Seals webhook secrets at rest. */
  secretBox: SecretBox;
  /** The one client for calls to customer endpoints (verify, test, notifications). */
  webhookClient: OutboundClient;
  /** Users' webhook and alert lists, valid while their subscriptions version is unchanged. */
  listCache: VersionedCache;
  /** WEBHOOK_ALLOWED_NETWORKS, parsed. */
  allowedNetworks: Network[];
}

/** Who is calling: resolved from the API key before any handler runs. */
export interface Actor {
  userId: string;
  name: string;
  email: string;
  orgId: string;
  roleIds: string[];
  permissions: ReadonlySet<Permission>;
  apiKeyId: string;
}

export interface ServiceContext extends AppContext {
  actor: Actor;
}
