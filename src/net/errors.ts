import { addressClass } from './addresses.js';

export type OutboundFailure =
  'dns' | 'blocked_address' | 'bad_request' | 'tls' | 'timeout' | 'refused' | 'bad_status' | 'bad_body';

/** Why a call to a customer endpoint got no usable answer; `message` is a sentence fit to show the customer. */
export class OutboundError extends Error {
  override readonly name = 'OutboundError';

  constructor(
    readonly kind: OutboundFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function blockedAddress(ip: string): OutboundError {
  return new OutboundError('blocked_address', `address ${ip} is not allowed (${addressClass(ip)})`);
}

export function timedOut(deadlineMs: number): OutboundError {
  const after = deadlineMs % 1000 === 0 ? `${deadlineMs / 1000} s` : `${deadlineMs} ms`;
  return new OutboundError('timeout', `timed out after ${after}`);
}

const UNTRUSTED = 'the certificate is not trusted';
const TLS_MESSAGES: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: `${UNTRUSTED} (self-signed)`,
  SELF_SIGNED_CERT_IN_CHAIN: `${UNTRUSTED} (its chain ends in an unknown self-signed certificate)`,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: `${UNTRUSTED} (unknown issuer)`,
  UNABLE_TO_GET_ISSUER_CERT: `${UNTRUSTED} (unknown issuer)`,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: `${UNTRUSTED} (unknown issuer)`,
  CERT_UNTRUSTED: UNTRUSTED,
  ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate does not match the host name',
  HOSTNAME_MISMATCH: 'the certificate does not match the host name',
  CERT_HAS_EXPIRED: 'the certificate has expired',
  CERT_NOT_YET_VALID: 'the certificate is not valid yet',
  CERT_REVOKED: 'the certificate has been revoked',
  CERT_SIGNATURE_FAILURE: 'the certificate signature is invalid',
};
// Other certificate verification codes Node reports from OpenSSL.
const OTHER_CERTIFICATE_CODES = new Set([
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_REJECTED',
]);

const NETWORK_MESSAGES: Record<string, [OutboundFailure, string]> = {
  ENOTFOUND: ['dns', 'the name did not resolve'],
  ENODATA: ['dns', 'the name did not resolve'],
  EAI_AGAIN: ['dns', 'the name could not be resolved (temporary DNS failure)'],
  EAI_FAIL: ['dns', 'the name could not be resolved (DNS failure)'],
  ECONNREFUSED: ['refused', 'connection refused'],
  ECONNRESET: ['refused', 'the connection was reset'],
  EHOSTUNREACH: ['refused', 'the host is unreachable'],
  ENETUNREACH: ['refused', 'the network is unreachable'],
  EPIPE: ['refused', 'the connection was closed while sending'],
  UND_ERR_SOCKET: ['refused', 'the connection closed before the answer was complete'],
  UND_ERR_CLOSED: ['refused', 'the connection closed before the answer was complete'],
};
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** The error, its `cause` chain and the members of aggregate errors (undici and Node both wrap). */
function* related(error: unknown, depth = 0): Generator<unknown> {
  if (error === undefined || error === null || depth > 8) return;
  yield error;
  if (error instanceof AggregateError) for (const inner of error.errors) yield* related(inner, depth + 1);
  if (error instanceof Error) yield* related(error.cause, depth + 1);
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

// undici refuses some headers while building the request, before any connection (e.g. "invalid x-a header",
// "expect header not supported"). Its other argument errors are programming errors and stay unclassified.
const REQUEST_BUILD_CODES = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

function refusedHeader(error: unknown): OutboundError | undefined {
  const code = codeOf(error);
  if (code === undefined || !REQUEST_BUILD_CODES.has(code) || !(error instanceof Error)) return undefined;
  if (!/\bheader\b/.test(error.message)) return undefined;
  const message = `the stored headers could not be sent (${error.message}); edit the webhook's headers`;
  return new OutboundError('bad_request', message, { cause: error });
}

function fromCode(code: string, deadlineMs: number, cause: unknown): OutboundError | undefined {
  const tls = TLS_MESSAGES[code];
  if (tls !== undefined) return new OutboundError('tls', tls, { cause });
  if (OTHER_CERTIFICATE_CODES.has(code))
    return new OutboundError('tls', `the certificate was refused (${code})`, { cause });
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) {
    return new OutboundError('tls', `the TLS handshake failed (${code})`, { cause });
  }
  const network = NETWORK_MESSAGES[code];
  if (network !== undefined) return new OutboundError(network[0], network[1], { cause });
  if (TIMEOUT_CODES.has(code)) return timedOut(deadlineMs);
  if (code.startsWith('HPE_'))
    return new OutboundError('bad_status', `the answer was not valid HTTP (${code})`, { cause });
  if (code === 'UND_ERR_HEADERS_OVERFLOW')
    return new OutboundError('bad_status', 'the answer was not valid HTTP (its headers were too large)', {
      cause,
    });
  return undefined;
}

/**
 * The typed failure behind an error from a call, or undefined when it is not a network failure
 * (a programming error, which the caller should let through).
 */
export function classify(error: unknown, deadlineMs: number): OutboundError | undefined {
  const chain = [...related(error)];
  const ours = chain.find((e): e is OutboundError => e instanceof OutboundError);
  if (ours !== undefined) return ours;
  for (const e of chain) {
    // undici's parser errors often carry no code: the answer was not HTTP it could read.
    if (e instanceof Error && e.name === 'HTTPParserError' && codeOf(e) === undefined) {
      return new OutboundError('bad_status', `the answer was not valid HTTP (${e.message})`, {
        cause: error,
      });
    }
    const code = codeOf(e);
    const known = code === undefined ? undefined : (refusedHeader(e) ?? fromCode(code, deadlineMs, error));
    if (known !== undefined) return known;
  }
  const unknownSystemCode = chain.map(codeOf).find((code) => code !== undefined && /^E[A-Z]+$/.test(code));
  if (unknownSystemCode !== undefined) {
    return new OutboundError('refused', `the connection failed (${unknownSystemCode})`, { cause: error });
  }
  return undefined;
}
