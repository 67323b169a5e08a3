import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { hostLiteral, isAllowedAddress, parseNetworks, type Network } from './addresses.js';
import { blockedAddress, classify, OutboundError, timedOut } from './errors.js';
import { vettedLookup } from './lookup.js';

export { OutboundError, type OutboundFailure } from './errors.js';

export interface OutboundRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** One deadline over the whole exchange, from resolving the name to the last byte read. */
  deadlineMs: number;
  /** Default 65536. */
  maxBodyBytes?: number;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The endpoint sent more than `maxBodyBytes`; `body` holds the first `maxBodyBytes`. */
  truncated: boolean;
  elapsedMs: number;
}

export interface OutboundClientOptions {
  allowedNetworks: string[];
  /** PEM certificates trusted IN ADDITION to Node's bundled roots (+ NODE_EXTRA_CA_CERTS); never instead. */
  extraTrustedCertificates?: string[];
  userAgent: string;
}

const DEFAULT_MAX_BODY_BYTES = 65_536;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Node drops NODE_EXTRA_CA_CERTS once `ca` is given, so the file is read back in to keep it trusted. */
function environmentCertificates(): string[] {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (file === undefined || file === '') return [];
  try {
    return readFileSync(file, 'utf8').match(PEM_CERTIFICATE) ?? [];
  } catch {
    return []; // Node has already warned at start that the file is unreadable.
  }
}

function trustedCertificates(extra: string[] | undefined): string[] | undefined {
  if (extra === undefined || extra.length === 0) return undefined; // Node's defaults: bundled + environment
  return [...rootCertificates, ...environmentCertificates(), ...extra];
}

function flattenHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

async function readCapped(body: Dispatcher.ResponseData['body'], max: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size + chunk.length > max) {
      chunks.push(chunk.subarray(0, max - size));
      body.destroy(); // stop reading: whatever else the endpoint sends is not wanted
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { body: Buffer.concat(chunks), truncated: false };
}

/**
 * The one client for customer endpoints (docs/rules/webhooks.md#outbound-calls): https only, every resolved
 * address vetted and the socket connected to exactly those, certificates verified against trusted roots and
 * the host name, redirects returned rather than followed, one hard deadline, a capped body.
 *
 * `send` throws an OutboundError for a non-https URL or a refused address ('blocked_address'), for headers
 * the HTTP client will not send ('bad_request'), and for 'dns', 'tls', 'timeout', 'refused' (and
 * 'bad_status' for an answer that is not HTTP); any HTTP status is returned. A URL that does not parse
 * throws the URL parser's TypeError.
 */
export class OutboundClient {
  private readonly allowed: Network[];
  private readonly userAgent: string;
  private readonly agent: Agent;

  constructor(options: OutboundClientOptions) {
    this.allowed = parseNetworks(options.allowedNetworks);
    this.userAgent = options.userAgent;
    const ca = trustedCertificates(options.extraTrustedCertificates);
    this.agent = new Agent({
      connect: {
        lookup: vettedLookup(this.allowed),
        // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment cannot turn verification off.
        rejectUnauthorized: true,
        ...(ca === undefined ? {} : { ca }),
      },
    });
  }

  async send(request: OutboundRequest): Promise<OutboundResponse> {
    const started = performance.now();
    const url = this.checkedUrl(request.url);
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    // Racing the exchange, not only aborting it: undici applies an abort only once a socket is connected,
    // and name resolution or a silent connect must not outlast the deadline either.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = timedOut(request.deadlineMs);
        controller.abort(error);
        reject(error);
      }, request.deadlineMs);
    });
    try {
      const exchange = this.exchange(url, request, controller.signal);
      const { status, headers, body, truncated } = await Promise.race([exchange, deadline]);
      return { status, headers, body, truncated, elapsedMs: Math.round(performance.now() - started) };
    } catch (error) {
      if (controller.signal.aborted) throw timedOut(request.deadlineMs);
      throw classify(error, request.deadlineMs) ?? error;
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private checkedUrl(raw: string): URL {
    const url = new URL(raw);
    if (url.protocol !== 'https:') {
      throw new OutboundError(
        'blocked_address',
        `only https URLs are allowed, not ${url.protocol.slice(0, -1)}`,
      );
    }
    if (url.username !== '' || url.password !== '') {
      throw new OutboundError('blocked_address', 'URLs with a user name or password are not allowed');
    }
    // net.connect skips the lookup for an IP literal, so a literal is vetted here.
    const literal = hostLiteral(url.hostname);
    if (literal !== undefined && !isAllowedAddress(literal, this.allowed)) throw blockedAddress(literal);
    return url;
  }

  private async exchange(url: URL, request: OutboundRequest, signal: AbortSignal) {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
    // undici takes a Host header as the TLS server name; the name checked must be the URL's.
    delete headers.host;
    headers['user-agent'] = this.userAgent;
    const response = await this.agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers,
      body: request.body ?? null,
      signal,
      headersTimeout: request.deadlineMs,
      bodyTimeout: request.deadlineMs,
    });
    const read = await readCapped(response.body, request.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    return { status: response.statusCode, headers: flattenHeaders(response.headers), ...read };
  }
}
