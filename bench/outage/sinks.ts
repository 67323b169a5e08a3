// Where the outage's messages arrive: one HTTPS server in the runner standing in, by path, for the webhook's
// receiver, Slack, PagerDuty and Alertmanager's webhook receiver; and an SMTP server for the e-mail. Each
// arrival is noted with its wall-clock time (Date.now(), the clock of the service's `detected_at`), the
// organization it speaks of and whether it is a resolve.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { BenchCertificates } from '../lib/tls.js';

export const CHANNELS = ['webhook', 'Slack', 'PagerDuty', 'e-mail'] as const;
export type Channel = (typeof CHANNELS)[number] | 'Alertmanager';

export interface Arrival {
  at: number;
  /** The organization's name, as the message gives it. */
  org: string;
  resolved: boolean;
  /** What the message says of itself: the incident's reason, PagerDuty's action, Alertmanager's status. */
  reason: string;
  /** Members the message says are firing (webhook: counts.firing; Alertmanager: alerts in it). */
  firing?: number;
}

/** A Slack post, a PagerDuty event and an e-mail start with the incident's headline: "<org>: ...". */
const headlineOrg = (headline: string) => headline.slice(0, Math.max(0, headline.indexOf(': ')));
const resolvedHeadline = (headline: string) => / resolved \(/.test(headline);

/** What each stand-in makes of a POST's JSON body. */
const READERS: Record<string, { channel: Channel; read: (body: any) => Omit<Arrival, 'at'> }> = {
  '/hook': {
    channel: 'webhook',
    read: (body) => ({
      org: body.organization?.name ?? '',
      resolved: body.incident?.status === 'resolved',
      reason: body.type === 'INCIDENT' ? body.incident.reason : `not an incident (${body.type})`,
      firing: body.counts?.firing,
    }),
  },
  '/slack/services/T0BENCH/B0BENCH/outagebenchmarkslackWXYZ': {
    channel: 'Slack',
    read: (body) => ({
      org: headlineOrg(String(body.text)),
      resolved: resolvedHeadline(String(body.text)),
      reason: resolvedHeadline(String(body.text)) ? 'resolved' : 'firing',
    }),
  },
  '/pagerduty/v2/enqueue': {
    channel: 'PagerDuty',
    read: (body) => ({
      org: body.payload?.source ?? '',
      resolved: body.event_action === 'resolve',
      reason: body.event_action,
    }),
  },
  '/alertmanager': {
    channel: 'Alertmanager',
    read: (body) => ({
      org: body.groupLabels?.org ?? '',
      resolved: body.status === 'resolved',
      reason: body.status,
      firing: (body.alerts as { status: string }[]).filter((a) => a.status === 'firing').length,
    }),
  },
};

export const SLACK_PATH = Object.keys(READERS)[1]!;
export const PAGERDUTY_PATH = '/pagerduty/v2/enqueue';

/** `secret`: the webhook's, to answer its verification challenge (GET /hook?challenge=...). */
export async function startStandIns(tls: BenchCertificates, secret: string) {
  const arrivals = new Map<Channel, Arrival[]>(
    [...CHANNELS, 'Alertmanager' as const].map((channel) => [channel, []]),
  );
  const unknown: string[] = [];
  const server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const url = new URL(request.url ?? '/', 'https://localhost');
    const challenge = url.searchParams.get('challenge');
    if (request.method === 'GET') {
      const timestamp = String(request.headers['x-service-timestamp'] ?? '');
      const hmac = createHmac('sha256', secret).update(`${timestamp}.${challenge ?? ''}`, 'utf8');
      response.writeHead(challenge === null ? 400 : 200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ challenge, challenge_response: hmac.digest('hex') }));
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      const at = Date.now();
      const reader = READERS[url.pathname];
      try {
        if (reader === undefined) throw new Error(`no stand-in at ${url.pathname}`);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        arrivals.get(reader.channel)!.push({ at, ...reader.read(body) });
      } catch (error) {
        unknown.push(`${request.method} ${url.pathname}: ${String(error)}`);
      }
      // As the vendors answer: Slack "ok", PagerDuty 202 with its JSON.
      if (reader?.channel === 'PagerDuty') {
        response.writeHead(202, { 'content-type': 'application/json' });
        response.end('{"status":"success","message":"Event processed"}');
      } else response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = server.address() as AddressInfo;

  const mail = await startSmtpSink((at, subject) =>
    arrivals.get('e-mail')!.push({
      at,
      org: headlineOrg(subject),
      resolved: resolvedHeadline(subject),
      reason: resolvedHeadline(subject) ? 'resolved' : 'firing',
    }),
  );
  return {
    arrivals,
    /** Requests no stand-in could read: each one is a warning. */
    unknown,
    url: (path: string) => `https://127.0.0.1:${port}${path}`,
    smtpUrl: mail.url,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections());
      await mail.close();
    },
  };
}

export type StandIns = Awaited<ReturnType<typeof startStandIns>>;

/** An SMTP server on a free local port (no TLS, no authentication) that notes each message's subject. */
async function startSmtpSink(onMessage: (at: number, subject: string) => void) {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 1_000,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        onMessage(Date.now(), subjectOf(Buffer.concat(chunks).toString('utf8')));
        callback();
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    const listener = server.listen(0, '127.0.0.1', () => resolve((listener.address() as AddressInfo).port));
    listener.once('error', reject);
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The Subject header, unfolded, its RFC 2047 words (as nodemailer writes them) decoded. */
function subjectOf(raw: string): string {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
  const subject = /^subject:\s*(.*)$/im.exec(head)?.[1] ?? '';
  return subject
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?[^?]+\?([BbQq])\?([^?]*)\?=/g, (_all, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : data
            .replace(/_/g, ' ')
            .replace(/=([0-9A-Fa-f]{2})/g, (_hex, code: string) => String.fromCharCode(parseInt(code, 16))),
    );
}
