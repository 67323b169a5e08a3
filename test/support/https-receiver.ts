import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KeyPair } from './tls.js';

export interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Answers one request; it runs after the request body has been read and recorded. */
export type ReceiverHandler = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>;

export interface HttpsReceiver {
  port: number;
  /** `https://localhost:<port>` (the test server certificate names localhost and 127.0.0.1). */
  url: string;
  requests: ReceivedRequest[];
  /** Replaces the handler for the requests that follow. */
  handle(handler: ReceiverHandler): void;
  close(): Promise<void>;
}

export function answerJson(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): ReceiverHandler {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };
}

export function answerBytes(size: number): ReceiverHandler {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    response.end(Buffer.alloc(size, 0x61));
  };
}

export function redirectTo(location: string, status = 302): ReceiverHandler {
  return (_request, response) => {
    response.writeHead(status, { location });
    response.end();
  };
}

/** Waits before letting `then` answer; nothing is sent meanwhile, not even headers. */
export function delayed(ms: number, then: ReceiverHandler): ReceiverHandler {
  return (request, response) => {
    const timer = setTimeout(() => void then(request, response), ms);
    response.on('close', () => clearTimeout(timer));
  };
}

/** Sends headers at once, then one byte every `everyMs` for `count` times. */
export function trickle(everyMs: number, count: number): ReceiverHandler {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      sent += 1;
      if (sent >= count) {
        clearInterval(timer);
        response.end('.');
      } else {
        response.write('.');
      }
    }, everyMs);
    response.on('close', () => clearInterval(timer));
  };
}

/** A real HTTPS server on 127.0.0.1 with an ephemeral port that records every request it gets. */
export async function startHttpsReceiver(
  keyPair: KeyPair,
  handler: ReceiverHandler = answerJson(200, { ok: true }),
): Promise<HttpsReceiver> {
  let current = handler;
  const requests: ReceivedRequest[] = [];
  const server = createServer({ key: keyPair.key, cert: keyPair.cert }, (incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request: ReceivedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      Promise.resolve(current(request, response)).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  // Failed handshakes (the client refusing our certificate) are the point of several tests.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `https://localhost:${port}`,
    requests,
    handle(next) {
      current = next;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
