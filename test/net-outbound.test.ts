import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient, OutboundError, type OutboundRequest } from '../src/net/outbound.js';
import {
  answerBytes,
  answerJson,
  delayed,
  redirectTo,
  startHttpsReceiver,
  trickle,
  type HttpsReceiver,
} from './support/https-receiver.js';
import { testCertificates } from './support/tls.js';

// localhost may also resolve to ::1, and every resolved address must pass.
const LOOPBACK = ['127.0.0.0/8', '::1/128'];
const certificates = testCertificates();

let receiver: HttpsReceiver;
let selfSigned: HttpsReceiver;
let otherName: HttpsReceiver;
let client: OutboundClient;
let strictClient: OutboundClient;
let untrustingClient: OutboundClient;

beforeAll(async () => {
  receiver = await startHttpsReceiver(certificates.server);
  selfSigned = await startHttpsReceiver(certificates.selfSigned);
  otherName = await startHttpsReceiver(certificates.otherName);
  const base = { userAgent: 'edgewatch-test/1', extraTrustedCertificates: [certificates.ca] };
  client = new OutboundClient({ ...base, allowedNetworks: LOOPBACK });
  strictClient = new OutboundClient({ ...base, allowedNetworks: [] });
  untrustingClient = new OutboundClient({ userAgent: 'edgewatch-test/1', allowedNetworks: LOOPBACK });
});

afterAll(async () => {
  await Promise.all([client, strictClient, untrustingClient].map((c) => c?.close()));
  await Promise.all([receiver, selfSigned, otherName].map((r) => r?.close()));
});

function get(url: string, extra: Partial<OutboundRequest> = {}): OutboundRequest {
  return { url, method: 'GET', headers: {}, deadlineMs: 3000, ...extra };
}

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

describe('answers', () => {
  it('returns status, headers and body of a JSON answer', async () => {
    receiver.handle(answerJson(200, { ok: true }, { 'x-answer': 'yes' }));
    const response = await client.send(get(`${receiver.url}/hook?a=1`));
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.headers['x-answer']).toBe('yes');
    expect(JSON.parse(response.body.toString('utf8'))).toEqual({ ok: true });
    expect(response.truncated).toBe(false);
    expect(response.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(receiver.requests.at(-1)?.url).toBe('/hook?a=1');
  });

  it('sends the given headers and its own user agent, and never a Host of the caller', async () => {
    receiver.handle(answerJson(200, {}));
    await client.send(
      get(`${receiver.url}/h`, {
        headers: { 'X-Service-Timestamp': '1700000000000', 'X-Custom': 'abc', Host: 'evil.example' },
      }),
    );
    const headers = receiver.requests.at(-1)?.headers;
    expect(headers?.['x-service-timestamp']).toBe('1700000000000');
    expect(headers?.['x-custom']).toBe('abc');
    expect(headers?.['user-agent']).toBe('edgewatch-test/1');
    expect(headers?.host).toBe(`localhost:${receiver.port}`);
  });

  it('delivers a POST body', async () => {
    receiver.handle(answerJson(202, { received: true }));
    const body = JSON.stringify({ event: 'NODE_STATE_CHANGE', n: 1 });
    const response = await client.send({
      url: `${receiver.url}/in`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      deadlineMs: 3000,
    });
    expect(response.status).toBe(202);
    const received = receiver.requests.at(-1);
    expect(received?.method).toBe('POST');
    expect(received?.body).toBe(body);
    expect(received?.headers['content-type']).toBe('application/json');
  });

  it('returns a redirect as a status and does not follow it', async () => {
    receiver.handle(redirectTo(`${receiver.url}/elsewhere`));
    const before = receiver.requests.length;
    const response = await client.send(get(`${receiver.url}/start`));
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(`${receiver.url}/elsewhere`);
    expect(receiver.requests.length).toBe(before + 1);
    expect(receiver.requests.at(-1)?.url).toBe('/start');
  });

  it('returns a 500 as a status', async () => {
    receiver.handle(answerJson(500, { error: 'boom' }));
    const response = await client.send(get(receiver.url));
    expect(response.status).toBe(500);
  });

  it('reads at most 64 KiB by default and says the body was cut', async () => {
    receiver.handle(answerBytes(200_000));
    const response = await client.send(get(receiver.url));
    expect(response.status).toBe(200);
    expect(response.truncated).toBe(true);
    expect(response.body.length).toBe(65_536);
  });

  it('keeps a body of exactly the limit whole', async () => {
    receiver.handle(answerBytes(1000));
    const response = await client.send(get(receiver.url, { maxBodyBytes: 1000 }));
    expect(response.truncated).toBe(false);
    expect(response.body.length).toBe(1000);
  });

  it('connects to an allowed IP literal and checks its certificate against the IP', async () => {
    receiver.handle(answerJson(200, { ok: true }));
    const response = await client.send(get(`https://127.0.0.1:${receiver.port}/`));
    expect(response.status).toBe(200);
  });
});

describe('certificates', () => {
  it('refuses a self-signed certificate', async () => {
    const error = await failure(client.send(get(selfSigned.url)));
    expect(error.kind).toBe('tls');
    expect(error.message).toBe('the certificate is not trusted (self-signed)');
    expect(selfSigned.requests).toHaveLength(0);
  });

  it('refuses a certificate for another name', async () => {
    const error = await failure(client.send(get(otherName.url)));
    expect(error.kind).toBe('tls');
    expect(error.message).toBe('the certificate does not match the host name');
    expect(otherName.requests).toHaveLength(0);
  });

  it('refuses a certificate from an authority it was not told to trust', async () => {
    const error = await failure(untrustingClient.send(get(receiver.url)));
    expect(error.kind).toBe('tls');
    expect(error.message).toBe('the certificate is not trusted (unknown issuer)');
  });

  it('refuses an untrusted certificate even when NODE_TLS_REJECT_UNAUTHORIZED=0', async () => {
    const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    const fresh = new OutboundClient({ userAgent: 'edgewatch-test/1', allowedNetworks: LOOPBACK });
    try {
      receiver.handle(answerJson(200, { ok: true }));
      const before = receiver.requests.length;
      const error = await failure(fresh.send(get(receiver.url)));
      expect(error.kind).toBe('tls');
      expect(error.message).toBe('the certificate is not trusted (unknown issuer)');
      expect(receiver.requests.length).toBe(before);
    } finally {
      await fresh.close();
      if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
    }
  });

  it('keeps trusting NODE_EXTRA_CA_CERTS when extra certificates are given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgewatch-ca-'));
    const previous = process.env.NODE_EXTRA_CA_CERTS;
    const file = join(dir, 'ca.pem');
    writeFileSync(file, certificates.ca);
    process.env.NODE_EXTRA_CA_CERTS = file;
    const unrelated = certificates.selfSigned.cert;
    const withExtra = new OutboundClient({
      userAgent: 'edgewatch-test/1',
      allowedNetworks: LOOPBACK,
      extraTrustedCertificates: [unrelated],
    });
    try {
      receiver.handle(answerJson(200, { ok: true }));
      const response = await withExtra.send(get(receiver.url));
      expect(response.status).toBe(200);
    } finally {
      await withExtra.close();
      if (previous === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = previous;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('headers the HTTP client refuses', () => {
  it.each([
    [{ 'X-A': '\u0001' }, 'invalid x-a header'],
    [{ 'X-A': '€' }, 'invalid x-a header'],
    [{ Upgrade: 'websocket' }, 'invalid upgrade header'],
    [{ 'Keep-Alive': 'x' }, 'invalid keep-alive header'],
    [{ Expect: '100-continue' }, 'expect header not supported'],
  ])('%j is a typed failure, and nothing is sent', async (headers, reason) => {
    const before = receiver.requests.length;
    const error = await failure(client.send(get(receiver.url, { headers })));
    expect(error.kind).toBe('bad_request');
    expect(error.message).toBe(
      `the stored headers could not be sent (${reason}); edit the webhook's headers`,
    );
    expect(receiver.requests.length).toBe(before);
  });
});

describe('deadline', () => {
  it('gives up on an endpoint that answers too late', async () => {
    receiver.handle(delayed(3000, answerJson(200, {})));
    const started = performance.now();
    const error = await failure(client.send(get(receiver.url, { deadlineMs: 500 })));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('timed out after 500 ms');
    expect(performance.now() - started).toBeLessThan(500 + 1000);
  });

  it('gives up on a server that accepts the connection but never completes the TLS handshake', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const started = performance.now();
      const error = await failure(client.send(get(`https://localhost:${port}/`, { deadlineMs: 500 })));
      expect(error.kind).toBe('timeout');
      expect(performance.now() - started).toBeLessThan(500 + 1000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('does not let a trickling body stretch the deadline', async () => {
    receiver.handle(trickle(200, 25));
    const started = performance.now();
    const error = await failure(client.send(get(receiver.url, { deadlineMs: 1000 })));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('timed out after 1 s');
    expect(performance.now() - started).toBeLessThan(1000 + 1000);
  });
});

describe('addresses', () => {
  it('refuses a name that resolves to a non-public address', async () => {
    const before = receiver.requests.length;
    const error = await failure(strictClient.send(get(receiver.url)));
    expect(error.kind).toBe('blocked_address');
    expect(error.message).toMatch(/^address (127\.0\.0\.1|::1) is not allowed \(loopback\)$/);
    expect(receiver.requests.length).toBe(before);
  });

  it.each([
    ['https://127.0.0.1:PORT/', 'address 127.0.0.1 is not allowed (loopback)'],
    ['https://2130706433:PORT/', 'address 127.0.0.1 is not allowed (loopback)'],
    ['https://[::ffff:127.0.0.1]:PORT/', 'address ::ffff:7f00:1 is not allowed (loopback)'],
    ['https://[::1]:PORT/', 'address ::1 is not allowed (loopback)'],
  ])('refuses the literal %s', async (url, message) => {
    const before = receiver.requests.length;
    const error = await failure(strictClient.send(get(url.replace('PORT', String(receiver.port)))));
    expect(error.kind).toBe('blocked_address');
    expect(error.message).toBe(message);
    expect(receiver.requests.length).toBe(before);
  });

  it('reports a name that does not resolve', async () => {
    const error = await failure(client.send(get('https://nonexistent.invalid/')));
    expect(error.kind).toBe('dns');
    expect(error.message).toMatch(/^the name (did not resolve|could not be resolved)/);
  });

  it('reports a refused connection', async () => {
    const port = await closedPort();
    const error = await failure(client.send(get(`https://localhost:${port}/`)));
    expect(error.kind).toBe('refused');
    expect(error.message).toBe('connection refused');
  });

  it('refuses anything but https', async () => {
    const before = receiver.requests.length;
    const error = await failure(client.send(get(`http://localhost:${receiver.port}/`)));
    expect(error.kind).toBe('blocked_address');
    expect(error.message).toBe('only https URLs are allowed, not http');
    expect(receiver.requests.length).toBe(before);
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
