import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

function expectErrorShape(body: any, status: number, errorCode: string) {
  expect(body).toMatchObject({ statusCode: status, errorCode });
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(5);
  expect(Object.keys(body).every((k) => ['statusCode', 'errorCode', 'message', 'details'].includes(k))).toBe(
    true,
  );
}

describe('transport rules', () => {
  it('answers unknown routes with 404 in the error shape', async () => {
    const res = await t.request('GET', '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expectErrorShape(res.body, 404, 'NOT_FOUND');
  });

  it('answers a known path with a wrong method with 405 and Allow', async () => {
    const res = await t.request('PATCH', '/api/v2/role');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('GET');
    expectErrorShape(res.body, 405, 'METHOD_NOT_ALLOWED');
  });

  it('ignores trailing slashes', async () => {
    const a = await t.request('GET', '/api/v2/role');
    const b = await t.request('GET', '/api/v2/role/');
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
  });

  it('puts a request id on every response and keeps a sane caller-given one', async () => {
    const generated = await t.request('GET', '/healthz');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const given = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers['x-request-id']).toBe('abc-123');
    const hostile = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'a b\u0001' } });
    expect(hostile.headers['x-request-id']).not.toBe('a b\u0001');
    const failed = await t.request('GET', '/nope');
    expect(failed.headers['x-request-id']).toBeDefined();
    // Refusals before the handler (no key, wrong media type, broken JSON) carry one too.
    const refusals = [
      await t.request('GET', '/api/v2/role', { key: null }),
      await t.request('POST', '/api/v1/org', {
        payload: 'name=x',
        headers: { 'content-type': 'text/plain' },
      }),
      await t.request('POST', '/api/v1/org', {
        payload: '{',
        headers: { 'content-type': 'application/json' },
      }),
    ];
    expect(refusals.map((res) => res.status)).toEqual([401, 415, 400]);
    for (const res of refusals) expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses non-JSON bodies with 415', async () => {
    const res = await t.request('POST', '/api/v1/org', {
      payload: 'name=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expectErrorShape(res.body, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('accepts a JSON content type with a charset', async () => {
    const res = await t.request('POST', '/api/v1/org', {
      payload: JSON.stringify({ name: 'Charset org' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });

  it('refuses malformed JSON with 400', async () => {
    const res = await t.request('POST', '/api/v1/org', {
      payload: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400, 'BAD_REQUEST');
  });

  it('refuses prototype-polluting JSON with 400', async () => {
    const res = await t.request('POST', '/api/v1/org', {
      payload: '{"name":"x","__proto__":{"admin":true}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
  });

  it('refuses bodies over 64 KiB with 413', async () => {
    const res = await t.request('POST', '/api/v1/org', { body: { name: 'x'.repeat(70 * 1024) } });
    expect(res.status).toBe(413);
    expectErrorShape(res.body, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('accepts the JSON content type with an empty body on body-less routes', async () => {
    const res = await t.request('GET', '/api/v2/role', { headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    const del = await t.request('DELETE', '/api/v1/apikey/unknown-id', {
      headers: { 'content-type': 'application/json' },
    });
    expect(del.status).toBe(404);
  });
});

/** A POST over a real socket, framed as Node's client frames a body it has not seen yet: chunked. */
function chunkedPost(port: number, path: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    request.on('error', reject);
    request.flushHeaders();
    request.end(body);
  });
}

describe('a request without a body', () => {
  it('needs no Content-Type on any route and may have any, however it is framed; a body still needs JSON', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const key = { 'x-api-key': ADMIN_KEY };

    const bodyless = await chunkedPost(port, '/api/v1/apikey', key, '');
    expect(bodyless.status, JSON.stringify(bodyless.body)).toBe(201);
    const untyped = await chunkedPost(port, '/api/v1/apikey', key, '{}');
    expect(untyped.status).toBe(415);
    const typedButEmpty = await chunkedPost(
      port,
      '/api/v1/apikey',
      { ...key, 'content-type': 'text/plain' },
      '',
    );
    expect(typedButEmpty.status, JSON.stringify(typedButEmpty.body)).toBe(201);
    const wronglyTyped = await chunkedPost(
      port,
      '/api/v1/apikey',
      { ...key, 'content-type': 'text/plain' },
      '{}',
    );
    expect(wronglyTyped.status).toBe(415);
    const nowhere = await chunkedPost(port, '/api/v1/nothing-here', { 'content-type': 'text/plain' }, 'x');
    expect(nowhere.status).toBe(404);
  });
});

describe('validation messages', () => {
  it('lists the accepted values of a choice once, instead of one complaint per value', async () => {
    const me = await t.request('GET', '/api/v1/user/me');
    const alert = (body: object) =>
      t.request('POST', '/api/v1/mysubscriptions/', {
        body: { name: 'Choice', type: 'CERT_EXPIRY', settings: { org_id: me.body.org_id }, ...body },
      });
    const type = await alert({ type: 'FOO' });
    expect(type.status).toBe(400);
    expect(type.body.details).toEqual([
      {
        field: 'type',
        message:
          'must be one of: "NODE_STATE_CHANGE", "TUNNEL_STATE_CHANGE", "SERVICE_STATE_CHANGE", ' +
          '"NODE_IP_CHANGE", "CERT_EXPIRY", "HEADLESS_EXPIRY", "NODE_UPGRADE"',
      },
    ]);
    expect(type.body.message).toBe(`Invalid body: "type" ${type.body.details[0].message}.`);
    const includeChild = await alert({ settings: { org_id: me.body.org_id, include_child: 'maybe' } });
    expect(includeChild.body.details).toEqual([
      { field: 'settings.include_child', message: 'must be one of: a boolean, "true", "false"' },
    ]);
    const channel = await alert({ channel_type: 'sms' });
    expect(channel.body.details).toEqual([
      {
        field: 'channel_type',
        message: 'must be one of: "email", "webhook", "slack", "msteams", "pagerduty"',
      },
    ]);
  });
});

describe('hostile text', () => {
  it('refuses NUL characters in bodies, paths and query strings with 400', async () => {
    const body = await t.request('POST', '/api/v1/org', { body: { name: 'bad\u0000name' } });
    expectErrorShape(body.body, 400, 'BAD_REQUEST');
    const path = await t.request('GET', '/api/v1/org/a%00b');
    expectErrorShape(path.body, 400, 'BAD_REQUEST');
    const query = await t.request('DELETE', '/api/v1/user/webhook/x?force=%00');
    expectErrorShape(query.body, 400, 'BAD_REQUEST');
    expect((query.body as { message: string }).message).toContain('query string');
    const key = await t.request('POST', '/api/v1/webhook', {
      body: { name: 'x', url: 'https://example.com/', Header: { 'X-\u0000': 'v' } },
    });
    expect(key.status).toBe(400);
    // The field is named by its path: a key with NUL at the object holding it.
    expect((key.body as { message: string }).message).toContain('"Header"');
    expect((body.body as { message: string }).message).toContain('"name"');
  });

  it('keeps credential query values out of the log however their names are encoded', async () => {
    const secret = 'z'.repeat(43);
    for (const name of ['token', '%74oken', 'TOKEN', '%54oken']) {
      await t.request('GET', `/api/v1/user/verify-email?${name}=${secret}`, { key: null });
    }
    expect(t.logs.join('')).not.toContain(secret);
  });

  it('answers router faults in the error shape', async () => {
    const long = await t.request('GET', `/api/v1/org/${'a'.repeat(150)}`);
    expectErrorShape(long.body, 404, 'NOT_FOUND');
    expect(long.headers['x-request-id']).toBeDefined();
    const encoding = await t.request('GET', '/api/v1/org/%E0%A4%A');
    expectErrorShape(encoding.body, 400, 'BAD_REQUEST');
  });
});

describe('health, metrics and documentation', () => {
  it('serves /healthz and /readyz without a key', async () => {
    expect((await t.request('GET', '/healthz', { key: null })).body).toEqual({ status: 'ok' });
    expect((await t.request('GET', '/readyz', { key: null })).body).toEqual({ status: 'ok' });
  });

  it('serves Prometheus metrics with request counts by route and status', async () => {
    await t.request('GET', '/api/v2/role');
    const res = await t.request('GET', '/metrics', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.text).toMatch(
      /http_requests_total\{method="GET",route="\/api\/v2\/role",status_code="200"\} \d+/,
    );
    expect(res.text).toContain('http_request_duration_seconds_bucket');
  });

  it('serves an OpenAPI 3 document of every API route and a docs page', async () => {
    const res = await t.request('GET', '/openapi.json', { key: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    const paths = [
      '/api/v2/role',
      '/api/v1/user',
      '/api/v1/auth/login',
      '/api/v1/apikey',
      '/api/v2/apikey',
      '/api/v1/apikey/{id}',
      '/api/v1/org',
      '/api/v2/org',
      '/api/v1/org/{id}',
      '/api/v1/user/me',
      '/api/v1/user/verify-email',
      '/api/v1/webhook',
      '/api/v1/webhook/{id}',
      '/api/v1/webhook/{id}/verify',
      '/api/v1/webhook/{id}/test',
      '/api/v2/webhook',
      '/api/v1/user/webhook/{id}',
      '/api/v1/mysubscriptions',
      '/api/v2/mysubscriptions',
      '/api/v1/mysubscriptions/{id}',
    ];
    for (const path of paths) expect(Object.keys(res.body.paths)).toContain(path);
    expect(res.body.components.schemas.Notification.properties).toHaveProperty('current_state');
    expect(res.body.components.securitySchemes.apiKey).toMatchObject({ in: 'header', name: 'X-API-KEY' });
    const docs = await t.request('GET', '/docs', { key: null });
    expect([200, 302]).toContain(docs.status);
  });
});
