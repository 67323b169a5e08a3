import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { Agent, request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  hmacHex,
  standardSignature,
  standardWebhooksKey,
  verifyNotification,
} from '../src/receiver/index.js';
import { aliveNode, silence, until } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
import { testCertificates } from './support/tls.js';
import type { ReceivedRequest, ReceiverHandler } from './support/https-receiver.js';
import {
  correctEndpoint,
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// Standard Webhooks beside our own headers: real deliveries checked by the specification's own library.
let t: TestApp;
let endpoint: ReceiverWithSecret;
let orgId: string;
/** What the receiver answers to the next POSTs, before its correct answer; empty: the correct answer. */
const answersFirst: number[] = [];

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  const correct = correctEndpoint(() => endpoint.secret.value);
  const scripted: ReceiverHandler = (request, response) => {
    const status = request.method === 'POST' ? answersFirst.shift() : undefined;
    if (status === undefined) return correct(request, response);
    response.writeHead(status, { 'content-type': 'text/plain' });
    response.end(`answered ${status}`);
  };
  endpoint.receiver.handle(scripted);
  const access = receiverAccess();
  t = await startTestApp({
    ...access,
    env: { ...access.env, DELIVERY_RETRY_SCHEDULE: '0', MAX_WEBHOOKS_PER_USER: '10' },
  });
  orgId = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

/** A webhook with the secret the service generates, verified at the receiver. */
async function generatedSecretWebhook(name: string): Promise<{ id: string; secret: string }> {
  const created = await t.request('POST', '/api/v1/webhook', {
    body: { name, url: `${endpoint.receiver.url}/${encodeURIComponent(name)}` },
  });
  expect(created.status, created.text).toBe(201);
  const secret = created.body.secret as string;
  endpoint.secret.value = secret;
  const verified = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`);
  expect(verified.body.status, verified.text).toBe('SUCCESS');
  return { id: created.body.id as string, secret };
}

const postsTo = (name: string) =>
  endpoint.receiver.requests.filter((r) => r.method === 'POST' && r.url === `/${encodeURIComponent(name)}`);

const headersOf = (request: ReceivedRequest) => request.headers as Record<string, string>;

/** Both schemes' headers agree: one id, one instant. */
function expectSameInstantAndId(request: ReceivedRequest) {
  const headers = headersOf(request);
  expect(headers['webhook-id']).toBe(headers['x-service-delivery']);
  expect(headers['webhook-timestamp']).toBe(
    String(Math.floor(Number(headers['x-service-timestamp']) / 1000)),
  );
  expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
}

describe('secrets the service generates', () => {
  it('are whsec_ and the base64 of 32 random bytes, and the challenge still keys on their text', async () => {
    const { secret } = await generatedSecretWebhook('Generated');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(standardWebhooksKey(secret)).toHaveLength(32);
    const other = await generatedSecretWebhook('Generated too');
    expect(other.secret).not.toBe(secret);
  });
});

describe('a whsec_ secret', () => {
  it('signs a test with both schemes, and the standardwebhooks library accepts it', async () => {
    const hook = await generatedSecretWebhook('Tested');
    const res = await t.request('POST', `/api/v1/webhook/${hook.id}/test`, {
      body: { alert_type: 'TUNNEL_STATE_CHANGE' },
    });
    expect(res.body.status, res.text).toBe(200);
    const [request] = postsTo('Tested');
    expectSameInstantAndId(request!);
    const body = new Webhook(hook.secret).verify(request!.body, headersOf(request!));
    expect(body).toMatchObject({ type: 'TUNNEL_STATE_CHANGE', test: true });
  });

  it('signs each attempt of a notification anew under the same webhook-id, and a tampered or stale one is refused', async () => {
    const hook = await generatedSecretWebhook('Notified');
    const alert = await t.request('POST', '/api/v1/mysubscriptions', {
      body: {
        name: 'Down, standard',
        type: 'NODE_STATE_CHANGE',
        settings: { org_id: orgId, alert_me: 'UNREACHABLE' },
        channel_type: 'webhook',
        channel_id: hook.id,
      },
    });
    expect(alert.status, alert.text).toBe(201);
    const node = await aliveNode(t, 'standard-1');
    answersFirst.push(503);
    await silence(t, node.id);
    await until('the notification and its retry', () => postsTo('Notified').length >= 2);

    const [failed, delivered] = postsTo('Notified');
    for (const request of [failed!, delivered!]) expectSameInstantAndId(request);
    expect(headersOf(delivered!)['webhook-id']).toBe(headersOf(failed!)['webhook-id']);
    const library = new Webhook(hook.secret);
    const headers = headersOf(delivered!);
    expect(library.verify(delivered!.body, headers)).toMatchObject({ node: { id: node.id } });
    expect(verifyNotification(hook.secret, headers, delivered!.body)).toEqual({ ok: true });

    const tampered = delivered!.body.replace('UNREACHABLE', 'ALIVE');
    expect(() => library.verify(tampered, headers)).toThrow();
    expect(verifyNotification(hook.secret, headers, tampered)).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
    // The same delivery checked six minutes later: past the library's five-minute tolerance.
    const later = { now: Number(headers['webhook-timestamp']) * 1000 + 6 * 60_000 };
    expect(verifyNotification(hook.secret, headers, delivered!.body, later)).toMatchObject({ ok: false });
    const staleTimestamp = String(Number(headers['webhook-timestamp']) - 6 * 60);
    const stale = standardSignature(
      standardWebhooksKey(hook.secret)!,
      headers['webhook-id']!,
      staleTimestamp,
      delivered!.body,
    );
    const staleHeaders = { ...headers, 'webhook-timestamp': staleTimestamp, 'webhook-signature': stale };
    expect(() => library.verify(delivered!.body, staleHeaders)).toThrow(/timestamp/i);
  });

  it('is not disabled, and holds nothing, when a test is answered 410', async () => {
    const hook = await generatedSecretWebhook('Gone to a test');
    answersFirst.push(410);
    const res = await t.request('POST', `/api/v1/webhook/${hook.id}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(res.body.status, res.text).toBe(410);
    const read = await t.request('GET', `/api/v1/webhook/${hook.id}`);
    expect(read.body).toMatchObject({ is_enabled: true });
    expect(read.body.disabled_reason ?? null).toBeNull();
  });
});

describe('a secret of another form', () => {
  it('gets only the X-Service-* headers, which the receiver kit checks', async () => {
    endpoint.secret.value = 'receiver-secret-of-another-form';
    const hook = await enabledWebhook(t, endpoint, { name: 'Plain' });
    const res = await t.request('POST', `/api/v1/webhook/${hook.id}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(res.body.status, res.text).toBe(200);
    const request = endpoint.receiver.requests.filter((r) => r.method === 'POST').at(-1)!;
    const headers = headersOf(request);
    expect(Object.keys(headers).filter((name) => name.startsWith('webhook-'))).toEqual([]);
    expect(verifyNotification(hook.secret, headers, request.body)).toEqual({ ok: true });
    expect(verifyNotification(hook.secret, headers, `${request.body} `)).toMatchObject({ ok: false });
  });

  it('is not mistaken for a whsec_ secret when its key is too short, too long or not base64', () => {
    const base64 = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');
    expect(standardWebhooksKey(`whsec_${base64(24)}`)).toHaveLength(24);
    expect(standardWebhooksKey(`whsec_${base64(64)}`)).toHaveLength(64);
    expect(standardWebhooksKey(`whsec_${base64(23)}`)).toBeUndefined();
    expect(standardWebhooksKey(`whsec_${base64(65)}`)).toBeUndefined();
    expect(standardWebhooksKey('whsec_not*base64-at-all-0123456789abcdef')).toBeUndefined();
    expect(standardWebhooksKey(base64(32))).toBeUndefined();
  });
});

describe('examples/receiver.mjs', () => {
  let child: ChildProcess | undefined;
  let tlsDir: string;
  afterAll(() => {
    child?.kill();
    rmSync(tlsDir, { recursive: true, force: true });
  });

  async function freePort(): Promise<number> {
    const probe = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => probe.once('listening', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    return port;
  }

  it('takes a whsec_ secret by either scheme and refuses a tampered signature', async () => {
    const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const certificates = testCertificates();
    tlsDir = mkdtempSync(join(tmpdir(), 'edgewatch-receiver-tls-'));
    writeFileSync(join(tlsDir, 'cert.pem'), certificates.server.cert);
    writeFileSync(join(tlsDir, 'key.pem'), certificates.server.key);
    const port = await freePort();
    const env = { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) };
    Object.assign(env, { TLS_CERT: join(tlsDir, 'cert.pem'), TLS_KEY: join(tlsDir, 'key.pem') });
    child = spawn(process.execPath, ['examples/receiver.mjs'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await until('the example receiver listening', () => output.includes('listening'));

    const created = await t.request('POST', '/api/v1/webhook', {
      body: { name: 'Example receiver', url: `https://localhost:${port}/hook`, secret },
    });
    expect(created.status, created.text).toBe(201);
    const verified = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`);
    expect(verified.body.status, verified.text).toBe('SUCCESS');
    const tested = await t.request('POST', `/api/v1/webhook/${created.body.id}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(tested.body, tested.text).toMatchObject({ status: 200 });
    expect(output).toContain('NODE_STATE_CHANGE');

    const dispatcher = new Agent({ connect: { ca: certificates.ca } });
    const post = async (headers: Record<string, string>, body = '{"id":"e","type":"NODE_STATE_CHANGE"}') => {
      const answer = await undiciRequest(`https://localhost:${port}/hook`, {
        method: 'POST',
        body,
        dispatcher,
        headers: { 'content-type': 'application/json', ...headers },
      });
      await answer.body.text();
      return answer.statusCode;
    };
    const now = String(Date.now());
    const body = '{"id":"e","type":"NODE_STATE_CHANGE","alert":null,"resource":{"id":"r"},"sequence":1}';
    const byService = { 'x-service-timestamp': now, 'x-service-delivery': 'd-1' };
    const serviceSigned = { ...byService, 'x-service-signature': `v1=${hmacHex(secret, now, body)}` };
    expect(await post(serviceSigned, body)).toBe(200);
    // During a rotation's overlap the header carries the new secret's signature, then the old one's.
    const rotated = `v1=${hmacHex('whsec-the-new-one-0123456789', now, body)},${hmacHex(secret, now, body)}`;
    expect(
      await post({ ...byService, 'x-service-delivery': 'd-4', 'x-service-signature': rotated }, body),
    ).toBe(200);
    const seconds = String(Math.floor(Number(now) / 1000));
    const standard = standardSignature(standardWebhooksKey(secret)!, 'd-2', seconds, body);
    const standardHeaders = {
      'webhook-id': 'd-2',
      'webhook-timestamp': seconds,
      'webhook-signature': standard,
    };
    expect(await post(standardHeaders, body)).toBe(200);
    expect(await post({ ...standardHeaders, 'webhook-id': 'd-3' }, body)).toBe(401);
    await dispatcher.close();
  });
});
