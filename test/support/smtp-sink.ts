import net from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedEmail {
  /** Envelope recipients (RCPT TO). */
  to: string[];
  subject: string;
  /** The decoded text body. */
  text: string;
  raw: string;
}

export interface SmtpSink {
  /** An SMTP_URL for the service. */
  url: string;
  messages: ReceivedEmail[];
  /** The first message (already received or arriving within the bound) that matches. */
  waitFor(match: (email: ReceivedEmail) => boolean, timeoutMs?: number): Promise<ReceivedEmail>;
  close(): Promise<void>;
}

/** A real SMTP server on a free local port that keeps every message it is given. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedEmail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 1_000,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        messages.push({ ...parseMessage(raw), to: session.envelope.rcptTo.map((r) => r.address) });
        callback();
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    const listener = server.listen(0, '127.0.0.1', () =>
      resolve((listener.address() as net.AddressInfo).port),
    );
    listener.once('error', reject);
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(match, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find(match);
        if (found !== undefined) return found;
        if (Date.now() > deadline) throw new Error(`no matching e-mail within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An SMTP_URL where nothing listens: a port that was just free. */
export async function closedSmtpUrl(): Promise<string> {
  const probe = net.createServer();
  const port = await new Promise<number>((resolve) =>
    probe.listen(0, '127.0.0.1', () => resolve((probe.address() as net.AddressInfo).port)),
  );
  await new Promise((resolve) => probe.close(resolve));
  return `smtp://127.0.0.1:${port}`;
}

/** Enough of RFC 5322/2045 for single-part text messages: unfolded headers, QP or base64 body. */
export function parseMessage(raw: string): { subject: string; text: string; raw: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = (split === -1 ? raw : raw.slice(0, split)).replace(/\r\n[ \t]+/g, ' ');
  const body = split === -1 ? '' : raw.slice(split + 4);
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  return { subject: decodeWords(headers.get('subject') ?? ''), text: decodeBody(body, encoding), raw };
}

function decodeBody(body: string, encoding: string): string {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  return body;
}

function decodeQuotedPrintable(text: string): string {
  const parts = text.replace(/=\r?\n/g, '').split(/(=[0-9A-Fa-f]{2})/);
  const bytes = parts.map((part) =>
    /^=[0-9A-Fa-f]{2}$/.test(part) ? Buffer.from([parseInt(part.slice(1), 16)]) : Buffer.from(part, 'utf8'),
  );
  return Buffer.concat(bytes).toString('utf8');
}

/** RFC 2047 encoded words (`=?utf-8?B?...?=` / `=?utf-8?Q?...?=`) as nodemailer writes them. */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?[^?]+\?([BbQq])\?([^?]*)\?=/g, (_all, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    );
}
