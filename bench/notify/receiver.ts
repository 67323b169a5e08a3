// The local HTTPS endpoint every notification of the section goes to, the service's, the undici floor's and
// Alertmanager's alike: it answers the verification challenge, checks each notification's signature, answers
// 200 and notes when each one arrived (performance.now() of this process, the clock the senders use too).
import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { BenchCertificates } from '../lib/tls.js';

export interface Collection {
  /** Distinct notifications so far: by X-Service-Delivery, or by alert (Alertmanager). */
  count(): number;
  /** Resolves with the arrival time of the `expected`-th distinct notification. */
  done: Promise<number>;
  firstAt(): number | undefined;
  requests(): number;
  /** Notifications that came again (a retry keeps its delivery id). */
  duplicates(): number;
  /** Requests whose X-Service-Signature is not the HMAC of their body. */
  badSignatures(): number;
  /** TLS connections the senders opened. */
  connections(): number;
}

export interface CollectOptions {
  expected: number;
  /** Called with each new signed notification's body and arrival time. */
  onNotification?: (body: string, at: number) => void;
}

export interface Receiver {
  /** Where the service's webhook and the floor send. */
  hookUrl: string;
  /** Where Alertmanager's webhook sends. */
  alertmanagerUrl: string;
  /** Counts what arrives from now on into a new collection, until the next one. */
  collect(options: CollectOptions): Collection;
  /** Notifications that arrived while no collection was open. */
  strays(): number;
  /** The body of the last signed notification from the service, for the floor to send the same bytes. */
  sampleBody(): string | undefined;
  close(): Promise<void>;
}

const HOOK_PATH = '/hook';
const ALERTMANAGER_PATH = '/alertmanager';

interface Open {
  options: CollectOptions;
  seen: Set<string>;
  firstAt: number | undefined;
  requests: number;
  duplicates: number;
  badSignatures: number;
  connections: number;
  resolve: (at: number) => void;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.once('error', reject);
  });
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export async function startReceiver(certificates: BenchCertificates, secret: string): Promise<Receiver> {
  let open: Open | undefined;
  let strays = 0;
  let sample: string | undefined;
  const sign = (timestamp: string, payload: string) =>
    createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');

  const arrived = (keys: string[], at: number, signed: boolean | undefined, body: string) => {
    if (open === undefined) {
      strays += keys.length;
      return;
    }
    const current = open;
    current.requests += 1;
    if (signed === false) current.badSignatures += 1;
    for (const key of keys) {
      if (current.seen.has(key)) {
        current.duplicates += 1;
        continue;
      }
      current.seen.add(key);
      current.firstAt ??= at;
      if (signed === true) current.options.onNotification?.(body, at);
      if (current.seen.size === current.options.expected) current.resolve(at);
    }
  };

  const server = createServer({ key: certificates.key, cert: certificates.cert }, (request, response) => {
    const url = new URL(request.url ?? '/', 'https://127.0.0.1');
    if (request.method === 'GET') {
      const challenge = url.searchParams.get('challenge');
      const timestamp = header(request, 'x-service-timestamp');
      if (challenge === null || timestamp === undefined) {
        response.writeHead(400, { 'content-type': 'text/plain' }).end('challenge and timestamp required');
        return;
      }
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ challenge, challenge_response: sign(timestamp, challenge) }));
      return;
    }
    readBody(request).then(
      (body) => {
        const at = performance.now();
        if (url.pathname === ALERTMANAGER_PATH) {
          const { alerts } = JSON.parse(body) as { alerts: { labels: Record<string, string> }[] };
          arrived(
            alerts.map(({ labels }) => `${labels.round}/${labels.node}`),
            at,
            undefined,
            body,
          );
        } else {
          const timestamp = header(request, 'x-service-timestamp') ?? '';
          const signed = header(request, 'x-service-signature') === `v1=${sign(timestamp, body)}`;
          const delivery = header(request, 'x-service-delivery') ?? '';
          if (signed && header(request, 'user-agent')?.startsWith('edgewatch') === true) sample = body;
          arrived([delivery], at, signed, body);
        }
        response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      },
      () => response.destroy(),
    );
  });
  server.on('secureConnection', () => {
    if (open !== undefined) open.connections += 1;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const base = `https://127.0.0.1:${port}`;

  return {
    hookUrl: base + HOOK_PATH,
    alertmanagerUrl: base + ALERTMANAGER_PATH,
    collect(options) {
      let resolve: (at: number) => void = () => undefined;
      const done = new Promise<number>((settle) => (resolve = settle));
      const current: Open = {
        options,
        seen: new Set(),
        firstAt: undefined,
        requests: 0,
        duplicates: 0,
        badSignatures: 0,
        connections: 0,
        resolve,
      };
      open = current;
      return {
        count: () => current.seen.size,
        done,
        firstAt: () => current.firstAt,
        requests: () => current.requests,
        duplicates: () => current.duplicates,
        badSignatures: () => current.badSignatures,
        connections: () => current.connections,
      };
    },
    strays: () => strays,
    sampleBody: () => sample,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
