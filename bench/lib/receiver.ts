// The webhook receiver every section sends to: HTTPS, answering the verification challenge with node:crypto
// (not the service's code, so a wrong answer from either side fails), checking signatures, and noting what
// arrived and when (performance.now(), the senders' clock too) and which ids came again after their 2xx.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { BenchCertificates } from './tls.js';

/** What arrived since `collect`: distinct notifications, again within it, wrongly signed. */
export interface Collection {
  received: Set<string>;
  /** Resolves with the arrival time of the `expected`-th distinct notification. */
  done: Promise<number>;
  duplicates: number;
  badSignatures: number;
}

type Open = Collection & {
  expected: number;
  arrived: (at: number) => void;
  onNotification?: ((body: string, at: number) => void) | undefined;
};

function note(c: Open, keys: string[], signed: boolean, body: string, at: number) {
  if (!signed) c.badSignatures += 1;
  for (const key of keys) {
    if (c.received.has(key)) {
      c.duplicates += 1;
      continue;
    }
    c.received.add(key);
    c.onNotification?.(body, at);
    if (c.received.size === c.expected) c.arrived(at);
  }
}

/** How a POST is answered: 200 at once unless this says otherwise. */
type Answer = () => { status: number; delayMs?: number } | undefined;

export async function startReceiver(tls: BenchCertificates, secret: string, answer?: Answer) {
  const hmac = (timestamp: string, text: string) =>
    createHmac('sha256', secret).update(`${timestamp}.${text}`, 'utf8').digest('hex');
  let open: Open | undefined;
  const seen = {
    /** POSTs received; delivery ids answered 2xx; ids that came again after they were answered 2xx. */
    requests: 0,
    delivered: new Set<string>(),
    duplicates: [] as string[],
    /** Notifications that arrived while no collection was open. */
    strays: 0,
    /** The body of the last signed notification from the service, for the floor to send the same bytes. */
    sample: undefined as string | undefined,
  };
  const server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const header = (name: string) => String(request.headers[name] ?? '');
    const url = new URL(request.url ?? '/', 'https://localhost');
    const challenge = url.searchParams.get('challenge');
    if (request.method === 'GET') {
      const body = { challenge, challenge_response: hmac(header('x-service-timestamp'), challenge ?? '') };
      response.writeHead(challenge === null ? 400 : 200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      const at = performance.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const delivery = header('x-service-delivery');
      seen.requests += 1;
      if (seen.delivered.has(delivery)) seen.duplicates.push(delivery);
      const alertmanager = url.pathname === '/alertmanager';
      const signed =
        alertmanager || header('x-service-signature') === `v1=${hmac(header('x-service-timestamp'), body)}`;
      if (signed && header('user-agent').startsWith('edgewatch')) seen.sample = body;
      const keys = alertmanager
        ? (JSON.parse(body).alerts as { labels: Record<string, string> }[]).map(
            (a) => `${a.labels.round}/${a.labels.node}`,
          )
        : [delivery];
      if (open === undefined) seen.strays += keys.length;
      else note(open, keys, signed, body, at);
      const { status, delayMs = 0 } = answer?.() ?? { status: 200 };
      // A sender that gave up (a timeout) has closed the connection: that request was never answered.
      let gone = false;
      response.once('close', () => (gone ||= !response.writableFinished));
      response.once('finish', () => status >= 200 && status < 300 && seen.delivered.add(delivery));
      const reply = () => gone || response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      if (delayMs > 0) setTimeout(reply, delayMs);
      else reply();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = server.address() as AddressInfo;
  return Object.assign(seen, {
    url: (path: string) => `https://127.0.0.1:${port}${path}`,
    collect(expected: number, onNotification?: (body: string, at: number) => void): Collection {
      let arrived: (at: number) => void = () => undefined;
      const done = new Promise<number>((resolve) => (arrived = resolve));
      open = {
        received: new Set(),
        done,
        duplicates: 0,
        badSignatures: 0,
        expected,
        arrived,
        onNotification,
      };
      return open;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()),
  });
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
