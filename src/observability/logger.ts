import pino, { type Logger, type DestinationStream } from 'pino';

/** Paths never written to the log: keys, passwords, secrets, tokens — wherever they appear. */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  '*.password',
  '*.new_password',
  '*.secret',
  '*.token',
  '*.api_key',
  '*.key',
  'password',
  'new_password',
  'secret',
  'token',
  'api_key',
];

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  id?: string;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'edgewatch' },
    // Headers are never logged (they carry X-API-KEY); URLs lose credential query values.
    serializers: {
      req: (req: LoggedRequest) => ({
        method: req.method,
        url: redactUrl(req.url ?? ''),
        remoteAddress: req.ip,
      }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/** Query parameters whose values are credentials (e-mail verification tokens). */
const SECRET_QUERY_NAMES = new Set(['token', 'challenge', 'api_key']);

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}

/**
 * The URL with the values of credential parameters replaced. Names are compared as the query parser
 * reads them (percent-decoded, any case), so `?%74oken=` is caught as surely as `?token=`.
 */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const fragmentStart = url.indexOf('#', queryStart);
  const queryEnd = fragmentStart === -1 ? url.length : fragmentStart;
  const pairs = url.slice(queryStart + 1, queryEnd).split('&');
  const redacted = pairs.map((pair) => {
    const equals = pair.indexOf('=');
    if (equals === -1 || !SECRET_QUERY_NAMES.has(decodedName(pair.slice(0, equals)))) return pair;
    return `${pair.slice(0, equals)}=[redacted]`;
  });
  return `${url.slice(0, queryStart + 1)}${redacted.join('&')}${url.slice(queryEnd)}`;
}
