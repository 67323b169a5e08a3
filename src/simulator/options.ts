/** The simulator's options: the command line's strings, checked and turned into numbers. */

export const DEFAULT_URL = 'http://localhost:8080';
export const DEFAULT_NODES = '10';
/** The service's own default NODE_REPORT_INTERVAL_S. */
export const DEFAULT_INTERVAL = '30s';
export const DEFAULT_FLAP_RATE = '0.01';
export const DEFAULT_CONCURRENCY = '32';
export const KEY_VARIABLE = 'EDGEWATCH_API_KEY';

export const MAX_NODES = 100_000;
const MIN_INTERVAL_S = 0.2; // half the service's limit of 10 reports a second from one node
const MAX_INTERVAL_S = 86_400;
const MAX_DURATION_S = 365 * 86_400;
const MAX_CONCURRENCY = 1_024;

export interface SimulateOptions {
  /** The service's base URL (a path prefix is kept). */
  url: URL;
  key: string;
  nodes: number;
  intervalS: number;
  /** The chance, per report, that each tunnel and each service goes down for one interval. */
  flapRate: number;
  /** Seconds of reporting; undefined: until stopped. */
  durationS: number | undefined;
  /** Requests in flight at most. */
  concurrency: number;
}

/** What commander hands over: every value as typed. */
export interface RawSimulateOptions {
  url?: string;
  key?: string;
  nodes?: string;
  interval?: string;
  flapRate?: string;
  duration?: string;
  concurrency?: string;
}

/** An option with a value the simulator cannot use: one line, naming the option. */
export class OptionError extends Error {}

function wholeNumber(name: string, text: string, min: number, max: number): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new OptionError(`${name} must be a whole number from ${min} to ${max}, got "${text}".`);
  }
  return value;
}

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3_600 };

/** Seconds from `30`, `30s`, `500ms`, `1.5m` or `2h`; NaN when it is none of these. */
export function parseSeconds(text: string): number {
  const match = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) return NaN;
  return Number(match[1]) * (UNIT_SECONDS[match[2] ?? 's'] ?? NaN);
}

function time(name: string, text: string, min: number, max: number): number {
  const seconds = parseSeconds(text);
  if (!(seconds >= min && seconds <= max)) {
    const range = min < 0.01 ? 'a positive time up to' : `a time from ${min} s to`;
    throw new OptionError(
      `${name} must be ${range} ${max} s, in seconds or with a unit (30, 30s, 500ms, 5m, 1h), got "${text}".`,
    );
  }
  return seconds;
}

function baseUrl(text: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '') {
    throw new OptionError(`--url must be the service's http:// or https:// address, got "${text}".`);
  }
  url.hash = '';
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

/** Checks every option; the first bad one throws an OptionError. The key may come from the environment. */
export function parseSimulateOptions(
  raw: RawSimulateOptions,
  env: Record<string, string | undefined>,
): SimulateOptions {
  const url = baseUrl(raw.url ?? DEFAULT_URL);
  const nodes = wholeNumber('--nodes', raw.nodes ?? DEFAULT_NODES, 1, MAX_NODES);
  const intervalS = time('--interval', raw.interval ?? DEFAULT_INTERVAL, MIN_INTERVAL_S, MAX_INTERVAL_S);
  const rateText = raw.flapRate ?? DEFAULT_FLAP_RATE;
  const flapRate = /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(rateText) ? Number(rateText) : NaN;
  if (!(flapRate >= 0 && flapRate <= 1)) {
    throw new OptionError(
      `--flap-rate must be a number from 0 to 1 (the chance per report that each tunnel and service ` +
        `flaps), got "${rateText}".`,
    );
  }
  const durationS =
    raw.duration === undefined ? undefined : time('--duration', raw.duration, 0.001, MAX_DURATION_S);
  const concurrency = wholeNumber(
    '--concurrency',
    raw.concurrency ?? DEFAULT_CONCURRENCY,
    1,
    MAX_CONCURRENCY,
  );
  const key = (raw.key ?? env[KEY_VARIABLE] ?? '').trim();
  if (key === '') throw new OptionError(`No API key: pass --key or set ${KEY_VARIABLE}.`);
  return { url, key, nodes, intervalS, flapRate, durationS, concurrency };
}
