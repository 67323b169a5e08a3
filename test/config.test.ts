import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

const HEX_KEY = 'ab'.repeat(32);
const BASE64_KEY = Buffer.alloc(32, 7).toString('base64');

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('defaults', () => {
  it('follows the contract when nothing is set', () => {
    const config = loadConfig({});
    expect(config).toEqual({
      port: 8080,
      host: '0.0.0.0',
      database: { kind: 'sqlite', file: path.resolve('data/edgewatch.db') },
      publicUrl: 'http://localhost:8080',
      smtpUrl: undefined,
      secretKey: undefined,
      bootstrapApiKey: undefined,
      webhookAllowedNetworks: [],
      maxWebhooksPerUser: 3,
      maxWebhookAlertsPerUser: 10,
      maxChannelsPerUser: 10,
      pagerDutyEventsUrl: 'https://events.pagerduty.com/v2/enqueue',
      logLevel: 'info',
      logRequests: 'all',
      jobPollIntervalMs: 1_000,
      jobLeaseMs: 30_000,
      shutdownTimeoutMs: 10_000,
      eventRetentionDays: 30,
      fleetHistoryRetentionDays: 7,
      nodeReportIntervalS: 30,
      nodeHeartbeatTimeoutS: 90,
      deliveryTimeoutMs: 5_000,
      deliveryConcurrencyPerWebhook: 8,
      deliveryRetryScheduleMs: [
        5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
      ],
    });
  });

  it('reads a delivery retry schedule with units, and 0', () => {
    expect(loadConfig({ DELIVERY_RETRY_SCHEDULE: '250ms, 0, 2s,1m,1h' }).deliveryRetryScheduleMs).toEqual([
      250, 0, 2_000, 60_000, 3_600_000,
    ]);
    expect(() => loadConfig({ DELIVERY_RETRY_SCHEDULE: '5s,soon' })).toThrow(
      'Invalid configuration: DELIVERY_RETRY_SCHEDULE must be durations like 5s,30s,2m,1h (units ms, s, m, h), got "soon"',
    );
  });

  it('derives the public URL from the port', () => {
    expect(loadConfig({ PORT: '9090' }).publicUrl).toBe('http://localhost:9090');
  });

  it('treats empty and blank variables as unset', () => {
    const config = loadConfig({ PORT: '', LOG_LEVEL: '  ', SMTP_URL: '', SECRET_KEY: '' });
    expect(config.port).toBe(8080);
    expect(config.logLevel).toBe('info');
    expect(config.smtpUrl).toBeUndefined();
    expect(config.secretKey).toBeUndefined();
  });
});

describe('valid values', () => {
  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '3000',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://edgewatch:pw@db.internal:5432/edgewatch',
      PUBLIC_URL: 'https://edgewatch.example.com/',
      SMTP_URL: 'smtps://mailer:pw@smtp.example.com:465',
      SECRET_KEY: HEX_KEY,
      BOOTSTRAP_API_KEY: 'k'.repeat(40),
      WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8, fd00::/8',
      MAX_WEBHOOKS_PER_USER: '5',
      MAX_WEBHOOK_ALERTS_PER_USER: '0',
      LOG_LEVEL: 'debug',
      LOG_REQUESTS: 'errors',
      JOB_POLL_INTERVAL_MS: '250',
      JOB_LEASE_MS: '5000',
      SHUTDOWN_TIMEOUT_MS: '1',
      EVENT_RETENTION_DAYS: '7',
      FLEET_HISTORY_RETENTION_DAYS: '14',
    });
    expect(config.port).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.database).toEqual({
      kind: 'postgres',
      url: 'postgres://edgewatch:pw@db.internal:5432/edgewatch',
    });
    expect(config.publicUrl).toBe('https://edgewatch.example.com');
    expect(config.smtpUrl).toBe('smtps://mailer:pw@smtp.example.com:465');
    expect(config.secretKey).toEqual(Buffer.from(HEX_KEY, 'hex'));
    expect(config.bootstrapApiKey).toBe('k'.repeat(40));
    expect(config.webhookAllowedNetworks).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(config.maxWebhooksPerUser).toBe(5);
    expect(config.maxWebhookAlertsPerUser).toBe(0);
    expect(config.logLevel).toBe('debug');
    expect(config.logRequests).toBe('errors');
    expect(config.jobPollIntervalMs).toBe(250);
    expect(config.jobLeaseMs).toBe(5000);
    expect(config.shutdownTimeoutMs).toBe(1);
    expect(config.eventRetentionDays).toBe(7);
    expect(config.fleetHistoryRetentionDays).toBe(14);
  });

  it('accepts a base64 secret key and a postgresql:// URL', () => {
    const config = loadConfig({ DATABASE_URL: 'postgresql://db/edgewatch', SECRET_KEY: BASE64_KEY });
    expect(config.secretKey).toEqual(Buffer.alloc(32, 7));
    expect(config.database.kind).toBe('postgres');
  });

  it('resolves a relative SQLite path and keeps :memory:', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:./x/y.db' }).database).toEqual({
      kind: 'sqlite',
      file: path.resolve('x/y.db'),
    });
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).database).toEqual({
      kind: 'sqlite',
      file: ':memory:',
    });
  });
});

describe('invalid values stop the start with a message naming the variable', () => {
  const cases: { variable: string; value: string }[] = [
    { variable: 'PORT', value: 'abc' },
    { variable: 'PORT', value: '70000' },
    { variable: 'PORT', value: '80.5' },
    { variable: 'PORT', value: '-1' },
    { variable: 'DATABASE_URL', value: 'mysql://x' },
    { variable: 'DATABASE_URL', value: 'sqlite:' },
    { variable: 'DATABASE_URL', value: './edgewatch.db' },
    { variable: 'SECRET_KEY', value: 'short' },
    { variable: 'SECRET_KEY', value: 'ab'.repeat(31) },
    { variable: 'SECRET_KEY', value: Buffer.alloc(33).toString('base64') },
    { variable: 'SECRET_KEY', value: `${BASE64_KEY.slice(0, -1)}!!!` },
    { variable: 'LOG_LEVEL', value: 'loud' },
    { variable: 'LOG_REQUESTS', value: 'some' },
    { variable: 'MAX_WEBHOOKS_PER_USER', value: '-1' },
    { variable: 'MAX_WEBHOOKS_PER_USER', value: 'three' },
    { variable: 'MAX_WEBHOOK_ALERTS_PER_USER', value: '1.5' },
    { variable: 'MAX_CHANNELS_PER_USER', value: 'ten' },
    { variable: 'PAGERDUTY_EVENTS_URL', value: 'http://events.example.com/v2/enqueue' },
    { variable: 'PAGERDUTY_EVENTS_URL', value: 'not a url' },
    { variable: 'WEBHOOK_ALLOWED_NETWORKS', value: 'nope' },
    { variable: 'WEBHOOK_ALLOWED_NETWORKS', value: '10.0.0.0/8,' },
    { variable: 'WEBHOOK_ALLOWED_NETWORKS', value: '10.0.0.0/33' },
    { variable: 'WEBHOOK_ALLOWED_NETWORKS', value: '300.1.1.1/8' },
    { variable: 'WEBHOOK_ALLOWED_NETWORKS', value: 'fd00::/129' },
    { variable: 'PUBLIC_URL', value: 'ftp://x' },
    { variable: 'PUBLIC_URL', value: 'not a url' },
    { variable: 'SMTP_URL', value: 'http://x' },
    { variable: 'SMTP_URL', value: 'smtp://' },
    { variable: 'BOOTSTRAP_API_KEY', value: 'too-short' },
    { variable: 'JOB_POLL_INTERVAL_MS', value: '0' },
    { variable: 'JOB_POLL_INTERVAL_MS', value: 'soon' },
    { variable: 'JOB_LEASE_MS', value: '-5' },
    { variable: 'SHUTDOWN_TIMEOUT_MS', value: '1.5' },
    { variable: 'EVENT_RETENTION_DAYS', value: '0' },
    { variable: 'FLEET_HISTORY_RETENTION_DAYS', value: '0' },
    { variable: 'NODE_REPORT_INTERVAL_S', value: '0' },
    { variable: 'NODE_HEARTBEAT_TIMEOUT_S', value: 'ninety' },
  ];

  it.each(cases)('$variable=$value', ({ variable, value }) => {
    const error = configError({ [variable]: value });
    expect(error.variable).toBe(variable);
    expect(error.message).toContain(variable);
    expect(error.message.split('\n')).toHaveLength(1);
  });

  it('requires SECRET_KEY with PostgreSQL', () => {
    const error = configError({ DATABASE_URL: 'postgres://db/edgewatch' });
    expect(error.variable).toBe('SECRET_KEY');
    expect(error.message).toContain('SECRET_KEY');
    expect(error.message).toMatch(/PostgreSQL/);
  });

  it('never echoes a secret value in the message', () => {
    const secret = 'sup3r-s3cret-but-not-a-key';
    expect(configError({ SECRET_KEY: secret }).message).not.toContain(secret);
    const bootstrap = 'short-bootstrap-value';
    expect(configError({ BOOTSTRAP_API_KEY: bootstrap }).message).not.toContain(bootstrap);
    const dbPassword = 'db-password-123';
    expect(configError({ DATABASE_URL: `mysql://u:${dbPassword}@x` }).message).not.toContain(dbPassword);
    expect(configError({ SMTP_URL: `http://u:${dbPassword}@x` }).message).not.toContain(dbPassword);
  });
});

describe('tracing (the standard OpenTelemetry variables)', () => {
  it('is off without an OTLP endpoint, whatever else is set', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(
      loadConfig({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).tracing,
    ).toBeUndefined();
  });

  it('appends /v1/traces to the base endpoint, and takes the traces endpoint as it is', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
    });
    const both = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    expect(both.tracing).toEqual({ url: 'https://traces.example/otlp', protocol: 'http/json' });
    const signal = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
    });
    expect(signal.tracing?.protocol).toBe('http/protobuf');
  });

  it('is off when the SDK is disabled or the exporter is none', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
  });

  it('names the variable that is wrong', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(configError({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).variable).toBe(
      'OTEL_EXPORTER_OTLP_PROTOCOL',
    );
    expect(configError({ ...endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'json' }).variable).toBe(
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    );
    expect(configError({ ...endpoint, OTEL_TRACES_EXPORTER: 'zipkin' }).variable).toBe(
      'OTEL_TRACES_EXPORTER',
    );
    expect(configError({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).variable).toBe(
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    );
  });
});
