import type { ErrorDetail } from '../../http/errors.js';
import { addressClass, hostLiteral, isAllowedAddress, type Network } from '../../net/addresses.js';

export const HEADER_LIMITS = { count: 3, totalLength: 2048 };

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7E]*$/;
const RESERVED_NAMES = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'user-agent',
  // Hop-by-hop: they steer the connection, which is the service's, and the HTTP client refuses them.
  'upgrade',
  'keep-alive',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);
const RESERVED_PREFIXES = ['x-service-', 'webhook-'];

/** The rules for a webhook's custom headers; every broken rule is reported, so one answer fixes them all. */
export function headerProblems(headers: Record<string, string>): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const entries = Object.entries(headers);
  if (entries.length > HEADER_LIMITS.count) {
    problems.push({
      field: 'Header',
      message: `has ${entries.length} headers; at most ${HEADER_LIMITS.count} are allowed`,
    });
  }
  const total = entries.reduce((sum, [name, value]) => sum + name.length + value.length, 0);
  if (total > HEADER_LIMITS.totalLength) {
    problems.push({
      field: 'Header',
      message: `names and values add up to ${total} characters; at most ${HEADER_LIMITS.totalLength} are allowed`,
    });
  }
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    const field = `Header.${name}`;
    if (!TOKEN.test(name)) problems.push({ field, message: 'is not a valid header name (an HTTP token)' });
    else if (RESERVED_NAMES.has(lower) || RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix))) {
      problems.push({ field, message: 'is set by the service itself and cannot be overridden' });
    }
    if (seen.has(lower)) problems.push({ field, message: 'is given twice (header names ignore case)' });
    seen.add(lower);
    const valueProblem = headerValueProblem(value);
    if (valueProblem !== undefined) problems.push({ field, message: valueProblem });
  }
  return problems;
}

function headerValueProblem(value: string): string | undefined {
  if (/[\r\n\0]/.test(value)) return 'has a line break or NUL in its value';
  if (!FIELD_VALUE.test(value)) {
    return 'has a character other than printable ASCII, space or tab in its value';
  }
  return undefined;
}

export type UrlVerdict = { ok: true } | { ok: false; status: 400 | 422; message: string };

/**
 * Shape rules (400) and the literal-address rule (422). Names are checked when the service calls the
 * endpoint, because DNS answers change; a literal address cannot, so it is refused at once.
 */
export function checkWebhookUrl(raw: string, allowed: Network[]): UrlVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, status: 400, message: 'url is not a valid absolute URL.' };
  }
  if (url.protocol !== 'https:') return { ok: false, status: 400, message: 'url must use https://.' };
  if (url.username !== '' || url.password !== '') {
    return { ok: false, status: 400, message: 'url must not contain a user name or password.' };
  }
  if (url.hostname === '') return { ok: false, status: 400, message: 'url has no host.' };
  const literal = hostLiteral(url.hostname);
  if (literal !== undefined && !isAllowedAddress(literal, allowed)) {
    return {
      ok: false,
      status: 422,
      message: `url points at ${literal}, a non-public address (${addressClass(literal)}); webhooks must be reachable on a public address.`,
    };
  }
  return { ok: true };
}
