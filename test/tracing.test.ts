import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../src/observability/tracing-sdk.js';
import { activeTraceparent, inSpan, tracingEnabled } from '../src/observability/tracing.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { until } from './support/fleet.js';
import { serviceEnv } from './support/service-env.js';
import { Server } from './support/service-process.js';
import { testCertificates } from './support/tls.js';
import { startCorrectReceiver, type ReceiverWithSecret } from './support/webhooks.js';

// One state change followed through the real service: the report's trace, continued from the caller's
// traceparent, holds the event, the notification and the delivery's request, and the webhook's receiver is
// told the same trace. The spans are read from a real OTLP/HTTP receiver, as the exporter sends them.

interface OtlpExport {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface SpanJson {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

const KIND = { SERVER: 2, CLIENT: 3 };

/** A collector's OTLP/HTTP traces endpoint: keeps every export, answers success. */
async function startOtlpReceiver() {
  const exports: OtlpExport[] = [];
  const server: HttpServer = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces')
        exports.push({ headers: request.headers, body: Buffer.concat(chunks) });
      const json = request.headers['content-type'] === 'application/json';
      response.writeHead(request.url === '/v1/traces' ? 200 : 404, {
        'content-type': json ? 'application/json' : 'application/x-protobuf',
      });
      response.end(json ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const spans = () =>
    exports
      .filter((e) => e.headers['content-type'] === 'application/json')
      .flatMap((e) => {
        const request = JSON.parse(e.body.toString('utf8')) as {
          resourceSpans: {
            resource: { attributes: SpanJson['attributes'] };
            scopeSpans: { spans: SpanJson[] }[];
          }[];
        };
        return request.resourceSpans.flatMap((r) =>
          r.scopeSpans.flatMap((s) => s.spans.map((span) => ({ ...span, resource: r.resource }))),
        );
      });
  return { base, exports, spans, close: () => new Promise((resolve) => server.close(resolve)) };
}

const attribute = (span: SpanJson, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

describe('tracing in the service (OTLP/HTTP JSON)', () => {
  const KEY = `ew_${randomBytes(24).toString('base64url')}`;
  let database: TestDatabase;
  let endpoint: ReceiverWithSecret;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let caDir: string;
  let server: Server;

  beforeAll(async () => {
    database = await createTestDatabase();
    endpoint = await startCorrectReceiver();
    otlp = await startOtlpReceiver();
    caDir = mkdtempSync(join(tmpdir(), 'edgewatch-ca-'));
    writeFileSync(join(caDir, 'ca.pem'), testCertificates().ca);
    server = await new Server({
      ...serviceEnv(database),
      BOOTSTRAP_API_KEY: KEY,
      NODE_EXTRA_CA_CERTS: join(caDir, 'ca.pem'),
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.base,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'edgewatch-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    }).started();
  });
  afterAll(async () => {
    server?.kill();
    await endpoint.receiver.close();
    await otlp.close();
    await database.drop();
    rmSync(caDir, { recursive: true, force: true });
  });

  async function call(path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await server.fetch(path, headers['x-node-token'] === undefined ? KEY : null, body, headers);
    const text = await res.text();
    expect(res.status, text).toBeLessThan(300);
    return JSON.parse(text) as Record<string, any>;
  }

  it("follows a report to the webhook's receiver in one trace", async () => {
    const me = await call('/api/v1/user/me');
    const hook = await call('/api/v1/webhook', {
      name: 'Receiver',
      url: `${endpoint.receiver.url}/hook`,
      secret: endpoint.secret.value,
    });
    expect((await call(`/api/v1/webhook/${hook.id}/verify`, {})).status).toBe('SUCCESS');
    await call('/api/v1/mysubscriptions', {
      name: 'Tunnels',
      type: 'TUNNEL_STATE_CHANGE',
      settings: { org_id: me.org_id, group_by: 'none' },
      channel_type: 'webhook',
      channel_id: hook.id,
    });
    const node = await call('/api/v1/node', { name: 'edge-traced' });
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    await call(
      '/api/v1/agent/report',
      { tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED' }] },
      { 'x-node-token': node.token as string, traceparent: `00-${traceId}-${callerSpan}-01` },
    );

    const posts = () => endpoint.receiver.requests.filter((r) => r.method === 'POST');
    await until('the notification at the receiver', () => posts().length === 1, 15_000);
    const traceparent = String(posts()[0]!.headers.traceparent);
    expect(traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const inTrace = () => otlp.spans().filter((span) => span.traceId === traceId);
    await until('the delivery span exported', () => inTrace().some((s) => s.kind === KIND.CLIENT), 15_000);
    const spans = inTrace();
    const one = (name: string) => {
      const found = spans.filter((span) => span.name === name);
      expect(found.map((span) => span.name)).toEqual([name]);
      return found[0]!;
    };
    const report = one('POST /api/v1/agent/report');
    // The node's first report: it becomes ALIVE, and its tunnel is new.
    const events = spans.filter((span) => span.name === 'edgewatch.event');
    expect(events.map((span) => attribute(span, 'edgewatch.event.type')).sort()).toEqual([
      'NODE_STATE_CHANGE',
      'TUNNEL_STATE_CHANGE',
    ]);
    const event = events.find((span) => attribute(span, 'edgewatch.event.type') === 'TUNNEL_STATE_CHANGE')!;
    const notification = one('edgewatch.notification');
    const request = one('POST');
    expect(report.kind).toBe(KIND.SERVER);
    expect(report.parentSpanId).toBe(callerSpan);
    expect(attribute(report, 'http.response.status_code')).toBe(200);
    for (const each of events) expect(each.parentSpanId).toBe(report.spanId);
    expect(notification.parentSpanId).toBe(event.spanId);
    expect(request.parentSpanId).toBe(notification.spanId);
    expect(request.kind).toBe(KIND.CLIENT);
    expect(attribute(request, 'http.response.status_code')).toBe(200);
    expect(attribute(request, 'server.address')).toBe('localhost');
    // The receiver's own spans join ours under the request's span.
    expect(traceparent.split('-')[2]).toBe(request.spanId);
    const service = report as SpanJson & { resource: { attributes: SpanJson['attributes'] } };
    expect(service.resource.attributes.find((a) => a.key === 'service.name')?.value).toEqual({
      stringValue: 'edgewatch-under-test',
    });
    // No header leaks into a span: the node's token is nowhere in what was exported.
    expect(otlp.exports.map((e) => e.body.toString('utf8')).join('')).not.toContain(node.token as string);
  }, 60_000);

  it('starts a trace of its own for a report that brings none', async () => {
    const node = await call('/api/v1/node', { name: 'edge-untraced' });
    const before = new Set(otlp.spans().map((span) => span.spanId));
    await call('/api/v1/agent/report', {}, { 'x-node-token': node.token as string });
    const fresh = () =>
      otlp.spans().filter((s) => !before.has(s.spanId) && s.name === 'POST /api/v1/agent/report');
    await until('the report span exported', () => fresh().length === 1, 15_000);
    expect(fresh()[0]!.parentSpanId ?? '').toBe('');
  }, 30_000);
});

describe('the exporter', () => {
  it('sends OTLP protobuf by default, and stops cleanly', async () => {
    const otlp = await startOtlpReceiver();
    const logger = pino({ level: 'silent' });
    const tracing = await startTracing({ url: `${otlp.base}/v1/traces`, protocol: 'http/protobuf' }, logger);
    try {
      expect(tracingEnabled()).toBe(true);
      const stored = await inSpan('edgewatch.test', {}, () => Promise.resolve(activeTraceparent()));
      expect(stored).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    } finally {
      await tracing.stop();
    }
    expect(tracingEnabled()).toBe(false);
    expect(otlp.exports.length).toBeGreaterThan(0);
    expect(otlp.exports[0]!.headers['content-type']).toBe('application/x-protobuf');
    // The span's name is in the protobuf body as a plain string.
    expect(otlp.exports[0]!.body.includes(Buffer.from('edgewatch.test'))).toBe(true);
    await otlp.close();
  });

  it('makes no span and stores no trace without tracing', async () => {
    expect(tracingEnabled()).toBe(false);
    const stored = await inSpan('edgewatch.test', {}, (span) =>
      Promise.resolve({ span, traceparent: activeTraceparent() }),
    );
    expect(stored).toEqual({ span: undefined, traceparent: null });
  });
});
