import path from 'node:path';
import ipaddr from 'ipaddr.js';

export type DatabaseTarget = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

export interface Config {
  port: number;
  host: string;
  database: DatabaseTarget;
  publicUrl: string;
  smtpUrl: string | undefined;
  /** 32-byte key for webhook secrets; undefined with SQLite means "use the key file beside the database". */
  secretKey: Buffer | undefined;
  bootstrapApiKey: string | undefined;
  webhookAllowedNetworks: string[];
  maxWebhooksPerUser: number;
  maxWebhookAlertsPerUser: number;
  /** Slack, Teams and PagerDuty channels per user. */
  maxChannelsPerUser: number;
  /** Where PagerDuty channels send their events (the Events API v2 enqueue URL). */
  pagerDutyEventsUrl: string;
  logLevel: string;
  /** LOG_REQUESTS: which answered requests get an access-log line (5xx are logged as errors whatever it says). */
  logRequests: RequestLogging;
  /** The workers' safety-net poll; enqueues wake idle workers at once. */
  jobPollIntervalMs: number;
  /** How long a claimed job is held before another worker may run it (a worker that died). */
  jobLeaseMs: number;
  /** How long a stopping worker lets running jobs finish before giving their leases back. */
  shutdownTimeoutMs: number;
  /** Finished records (e-mails, dead jobs; fleet events and notifications) older than this are pruned. */
  eventRetentionDays: number;
  /** The fleet's per-minute counts older than this are pruned. */
  fleetHistoryRetentionDays: number;
  /** How often agents are asked to report. */
  nodeReportIntervalS: number;
  /** Silence after which a node is UNREACHABLE. */
  nodeHeartbeatTimeoutS: number;
  /** One notification request, connect to last byte. */
  deliveryTimeoutMs: number;
  /** Notification requests in flight per webhook, across every worker process. */
  deliveryConcurrencyPerWebhook: number;
  /** The wait after the 1st, 2nd, … consecutive failed request to a webhook; the last repeats. */
  deliveryRetryScheduleMs: number[];
  /** Where spans go over OTLP; undefined (no endpoint set) means no tracing at all. */
  tracing: TracingSettings | undefined;
}

export interface TracingSettings {
  /** The OTLP/HTTP traces URL. */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid configuration: ${variable} ${reason}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const REQUEST_LOGGING = ['all', 'errors', 'none'] as const;
export type RequestLogging = (typeof REQUEST_LOGGING)[number];

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `5s,30s,2m,1h`: each a whole number with a unit (ms, s, m, h); `0` alone is allowed. */
function durationList(env: Env, name: string, fallback: string): number[] {
  const raw = read(env, name) ?? fallback;
  return raw.split(',').map((part) => {
    const item = part.trim();
    if (item === '0') return 0;
    const match = /^(\d+)(ms|s|m|h)$/.exec(item);
    if (match === null) {
      throw new ConfigError(name, `must be durations like 5s,30s,2m,1h (units ms, s, m, h), got "${item}"`);
    }
    return Number(match[1]) * UNIT_MS[match[2]!]!;
  });
}

function databaseTarget(env: Env): DatabaseTarget {
  const raw = read(env, 'DATABASE_URL') ?? 'sqlite:./data/edgewatch.db';
  if (raw.startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length);
    if (file === '') throw new ConfigError('DATABASE_URL', 'needs a file path after "sqlite:"');
    return { kind: 'sqlite', file: file === ':memory:' ? file : path.resolve(file) };
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL');
    }
    return { kind: 'postgres', url: raw };
  }
  throw new ConfigError('DATABASE_URL', 'must start with "sqlite:" or "postgres://"');
}

function secretKey(env: Env): Buffer | undefined {
  const raw = read(env, 'SECRET_KEY');
  if (raw === undefined) return undefined;
  // Node's base64 decoder skips characters it does not know, so a mistyped key must be caught here.
  const hex = /^[0-9a-fA-F]{64}$/.test(raw);
  const base64 = /^[A-Za-z0-9+/_-]+={0,2}$/.test(raw);
  const key = hex ? Buffer.from(raw, 'hex') : base64 ? Buffer.from(raw, 'base64') : Buffer.alloc(0);
  if (key.length !== 32)
    throw new ConfigError('SECRET_KEY', 'must be 32 bytes, written as 64 hex digits or base64');
  return key;
}

function httpUrl(env: Env, name: string, fallback: string): string {
  const raw = read(env, name) ?? fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `is not a valid URL: "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(name, 'must be http:// or https://');
  return raw.replace(/\/+$/, '');
}

/** An https:// URL: every call to a vendor goes through the guarded client, which speaks nothing else. */
function httpsUrl(env: Env, name: string, fallback: string): string {
  const url = httpUrl(env, name, fallback);
  if (!url.startsWith('https://')) throw new ConfigError(name, 'must be an https:// URL');
  return url;
}

function smtpUrl(env: Env): string | undefined {
  const raw = read(env, 'SMTP_URL');
  if (raw === undefined) return undefined;
  if (!/^smtps?:\/\/[^/]/.test(raw)) throw new ConfigError('SMTP_URL', 'must be an smtp:// or smtps:// URL');
  return raw;
}

function cidrList(env: Env): string[] {
  const raw = read(env, 'WEBHOOK_ALLOWED_NETWORKS');
  if (raw === undefined) return [];
  const items = raw.split(',').map((item) => item.trim());
  for (const item of items) {
    const valid = item.includes(':')
      ? ipaddr.IPv6.isValidCIDR(item)
      : ipaddr.IPv4.isValidCIDRFourPartDecimal(item);
    if (!valid) {
      throw new ConfigError(
        'WEBHOOK_ALLOWED_NETWORKS',
        `has "${item}", which is not a CIDR such as 10.0.0.0/8`,
      );
    }
  }
  return items;
}

const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/**
 * The standard OpenTelemetry variables that decide whether spans are exported, and where: only when an
 * OTLP endpoint is set (the specification's default of localhost would export from every install).
 */
function tracing(env: Env): TracingSettings | undefined {
  if (read(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporter = read(env, 'OTEL_TRACES_EXPORTER') ?? 'otlp';
  if (exporter === 'none') return undefined;
  if (exporter !== 'otlp') throw new ConfigError('OTEL_TRACES_EXPORTER', 'must be otlp or none');
  const signal = read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (signal === undefined && base === undefined) return undefined;
  const url =
    signal !== undefined
      ? httpUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', signal)
      : `${httpUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', base!)}/v1/traces`;
  const variable =
    read(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') === undefined
      ? 'OTEL_EXPORTER_OTLP_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL';
  const protocol = read(env, variable) ?? 'http/protobuf';
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol))
    throw new ConfigError(variable, `must be ${OTLP_PROTOCOLS.join(' or ')} (grpc is not supported)`);
  return { url, protocol: protocol as TracingSettings['protocol'] };
}

/** Reads the whole environment once; the first invalid variable stops the start with its name. */
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const database = databaseTarget(env);
  const key = secretKey(env);
  if (database.kind === 'postgres' && key === undefined) {
    throw new ConfigError('SECRET_KEY', 'is required with PostgreSQL, so that every instance shares it');
  }
  const logLevel = read(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const logRequests = read(env, 'LOG_REQUESTS') ?? 'all';
  if (!(REQUEST_LOGGING as readonly string[]).includes(logRequests))
    throw new ConfigError('LOG_REQUESTS', `must be one of ${REQUEST_LOGGING.join(', ')}`);
  const bootstrapApiKey = read(env, 'BOOTSTRAP_API_KEY');
  if (bootstrapApiKey !== undefined && bootstrapApiKey.length < 32) {
    throw new ConfigError('BOOTSTRAP_API_KEY', 'must be at least 32 characters long');
  }
  return {
    port,
    host: read(env, 'HOST') ?? '0.0.0.0',
    database,
    publicUrl: httpUrl(env, 'PUBLIC_URL', `http://localhost:${port}`),
    smtpUrl: smtpUrl(env),
    secretKey: key,
    bootstrapApiKey,
    webhookAllowedNetworks: cidrList(env),
    maxWebhooksPerUser: integer(env, 'MAX_WEBHOOKS_PER_USER', 3, 0, 1000),
    maxWebhookAlertsPerUser: integer(env, 'MAX_WEBHOOK_ALERTS_PER_USER', 10, 0, 10000),
    maxChannelsPerUser: integer(env, 'MAX_CHANNELS_PER_USER', 10, 0, 1000),
    pagerDutyEventsUrl: httpsUrl(env, 'PAGERDUTY_EVENTS_URL', 'https://events.pagerduty.com/v2/enqueue'),
    logLevel,
    logRequests: logRequests as RequestLogging,
    jobPollIntervalMs: integer(env, 'JOB_POLL_INTERVAL_MS', 1_000, 1, 3_600_000),
    jobLeaseMs: integer(env, 'JOB_LEASE_MS', 30_000, 1, 86_400_000),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 1, 3_600_000),
    eventRetentionDays: integer(env, 'EVENT_RETENTION_DAYS', 30, 1, 36_500),
    fleetHistoryRetentionDays: integer(env, 'FLEET_HISTORY_RETENTION_DAYS', 7, 1, 36_500),
    nodeReportIntervalS: integer(env, 'NODE_REPORT_INTERVAL_S', 30, 1, 86_400),
    nodeHeartbeatTimeoutS: integer(env, 'NODE_HEARTBEAT_TIMEOUT_S', 90, 1, 86_400),
    deliveryTimeoutMs: integer(env, 'DELIVERY_TIMEOUT_MS', 5_000, 1, 600_000),
    deliveryConcurrencyPerWebhook: integer(env, 'DELIVERY_CONCURRENCY_PER_WEBHOOK', 8, 1, 1_000),
    deliveryRetryScheduleMs: durationList(env, 'DELIVERY_RETRY_SCHEDULE', '5s,30s,2m,10m,30m,1h,2h,4h,8h'),
    tracing: tracing(env),
  };
}
