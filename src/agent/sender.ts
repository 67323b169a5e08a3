import type { AgentReport } from '../features/fleet/reports/schemas.js';
import { retryAfterMs } from './backoff.js';

/** How one request to the report route ended, as the agent acts on it. */
export type SendOutcome =
  /** 2xx: the server has the report (or the heartbeat). */
  | { kind: 'accepted'; reportIntervalS: number | undefined; serverDate: string | null }
  /** A network error, a timeout, 5xx or 429: try again later, at `afterMs` when the server said. */
  | { kind: 'retry'; why: string; afterMs: number | undefined }
  /** 401 or 403: the token is not (or no longer) good. */
  | { kind: 'refused'; status: number; why: string }
  /** Another 4xx: the server will not take this report as it is; sending it again would not help. */
  | { kind: 'rejected'; status: number; why: string };

export const REPORT_PATH = '/api/v1/agent/report';
const REQUEST_TIMEOUT_MS = 10_000;
const USER_AGENT = 'edgewatch-agent/1';

/** POSTs a report, or with no body a heartbeat, with the node's token. */
export async function sendReport(
  server: string,
  token: string,
  report: AgentReport | undefined,
  now: () => number = Date.now,
): Promise<SendOutcome> {
  const headers: Record<string, string> = { 'x-node-token': token, 'user-agent': USER_AGENT };
  if (report !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${server}${REPORT_PATH}`, {
      method: 'POST',
      headers,
      ...(report === undefined ? {} : { body: JSON.stringify(report) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (error) {
    return { kind: 'retry', why: networkFailure(error), afterMs: undefined };
  }
  const text = await response.text().catch(() => '');
  const serverDate = response.headers.get('date');
  if (response.ok) return { kind: 'accepted', reportIntervalS: reportInterval(text), serverDate };
  const why = `${response.status} ${errorMessage(text)}`.trim();
  if (response.status === 401 || response.status === 403)
    return { kind: 'refused', status: response.status, why };
  if (response.status >= 500 || response.status === 429) {
    const afterMs = retryAfterMs(response.headers.get('retry-after'), serverDate, now());
    return { kind: 'retry', why, afterMs };
  }
  return { kind: 'rejected', status: response.status, why };
}

function networkFailure(error: unknown): string {
  if (error instanceof DOMException && error.name === 'TimeoutError')
    return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

function reportInterval(text: string): number | undefined {
  try {
    const value = (JSON.parse(text) as { report_interval_s?: unknown }).report_interval_s;
    return typeof value === 'number' && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The contract's error message, when the answer has one. */
function errorMessage(text: string): string {
  try {
    const message = (JSON.parse(text) as { message?: unknown }).message;
    return typeof message === 'string' ? message.slice(0, 300) : '';
  } catch {
    return '';
  }
}
