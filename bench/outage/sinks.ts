// Where the outage's messages arrive, each noted with its wall-clock time (the clock of `detected_at`), the
// organization it speaks of and whether it is a resolve: the webhook's and Alertmanager's at the bench's
// receiver (lib/receiver.ts: the challenge, the signatures, one note per delivery id or alert); Slack's and
// PagerDuty's, which carry no delivery id, at an HTTPS stand-in of their own; the e-mail at an SMTP server.
import { createServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startReceiver } from '../lib/receiver.js';
import type { BenchCertificates } from '../lib/tls.js';

export const CHANNELS = ['webhook', 'Slack', 'PagerDuty', 'e-mail'] as const;
export type Arrival = { at: number; org: string; resolved: boolean };
type Arrivals = Record<(typeof CHANNELS)[number] | 'Alertmanager', Arrival[]>;
export const SLACK_PATH = '/slack/services/T0BENCH/B0BENCH/outagebenchmarkslackWXYZ';
export const PAGERDUTY_PATH = '/pagerduty/v2/enqueue';

/** A Slack post and an e-mail's subject start with the incident's headline: "<org>: …" or "<org>: resolved (". */
const headline = (text: string) =>
  [text.slice(0, Math.max(0, text.indexOf(': '))), / resolved \(/.test(text)] as const;

const listening = (server: { listen: (port: number, host: string, ready: () => void) => Server }) =>
  new Promise<number>((resolve) => {
    const listener = server.listen(0, '127.0.0.1', () => resolve((listener.address() as AddressInfo).port));
  });

/** `secret`: the webhook's, to answer its verification challenge and check its signatures. */
export async function startStandIns(tls: BenchCertificates, secret: string) {
  const arrivals = Object.fromEntries(
    [...CHANNELS, 'Alertmanager'].map((c) => [c, []]),
  ) as unknown as Arrivals;
  const note = (c: keyof Arrivals, at: number, org = '', resolved = false) =>
    arrivals[c].push({ at, org, resolved });
  const unread: string[] = [];
  const receiver = await startReceiver(tls, secret);
  let last: string | undefined;
  const collection = receiver.collect(Infinity, (text, at) => {
    if (text === last) return; // Alertmanager's message comes once for each alert in it.
    [last, at] = [text, performance.timeOrigin + at];
    const body = JSON.parse(text);
    if (body.groupLabels) note('Alertmanager', at, body.groupLabels.org, body.status === 'resolved');
    else note('webhook', at, body.organization?.name, body.incident?.status === 'resolved');
  });

  const vendors = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      const [at, pagerDuty] = [Date.now(), request.url === PAGERDUTY_PATH];
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (pagerDuty) note('PagerDuty', at, body.payload?.source, body.event_action === 'resolve');
        else if (request.url === SLACK_PATH) note('Slack', at, ...headline(String(body.text)));
        else throw new Error('no stand-in there');
      } catch (error) {
        unread.push(`${request.method} ${request.url}: ${String(error)}`);
      }
      response
        .writeHead(pagerDuty ? 202 : 200, { 'content-type': 'application/json' })
        .end('{"status":"success"}');
    });
  });
  const smtp = new SMTPServer({
    ...{ authOptional: true, disabledCommands: ['STARTTLS'], logger: false, closeTimeout: 1_000 },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        // The subject is the headline, in ASCII: unfolded, it needs no decoding.
        const head = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n')[0]!;
        const subject = /^subject: *(.*)$/im.exec(head.replace(/\r\n[ \t]+/g, ' '))?.[1];
        note('e-mail', Date.now(), ...headline(subject ?? ''));
        callback();
      });
    },
  });
  const [vendorsPort, smtpPort] = [await listening(vendors), await listening(smtp)];
  return {
    arrivals,
    /** Each list emptied: what arrived since the last take. */
    take: () =>
      Object.fromEntries(Object.entries(arrivals).map(([c, list]) => [c, list.splice(0)])) as Arrivals,
    url: (path: string) =>
      path === '/hook' ? receiver.url(path) : `https://127.0.0.1:${vendorsPort}${path}`,
    alertmanagerUrl: receiver.url('/alertmanager'),
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    problems: () => [
      ...unread.map((why) => `outage: a request no stand-in could read: ${why}`),
      ...(collection.badSignatures > 0
        ? [`outage: ${collection.badSignatures} webhook messages wrongly signed`]
        : []),
    ],
    close: async () => {
      await receiver.close();
      await new Promise<void>((resolve) => vendors.close(() => resolve()).closeAllConnections());
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    },
  };
}

export type StandIns = Awaited<ReturnType<typeof startStandIns>>;
