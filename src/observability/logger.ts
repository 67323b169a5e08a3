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
const SECRET_QUERY = /([?&](?:token|challenge|api_key)=)[^&#]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[redacted]');
}
