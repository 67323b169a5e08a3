import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/** Why a request got no answer at all. */
export type FailureKind = 'refused' | 'dns' | 'timeout' | 'reset' | 'network';

const FAILURE_TEXT: Record<FailureKind, string> = {
  refused: 'connection refused',
  dns: 'the host name does not resolve',
  timeout: 'no answer in time',
  reset: 'the connection was dropped',
  network: 'network error',
};

export class RequestFailed extends Error {
  constructor(
    readonly kind: FailureKind,
    cause: unknown,
  ) {
    const detail = cause instanceof Error && cause.message !== '' ? ` (${cause.message})` : '';
    super(`${FAILURE_TEXT[kind]}${detail}`, { cause });
  }
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** From sending the request to the end of the answer. */
  ms: number;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  // A host with several addresses (localhost: ::1 and 127.0.0.1) fails with one error per address.
  if (error instanceof AggregateError) return codeOf(error.errors[0]);
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause === undefined ? undefined : codeOf(cause);
}

export function failureKind(error: unknown): FailureKind {
  switch (codeOf(error)) {
    case 'ECONNREFUSED':
      return 'refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'dns';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timeout';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return 'reset';
    default:
      return 'network';
  }
}

/** The service's error message from an error answer, or the start of the body. */
export function messageOf(answer: Answer): string {
  try {
    const body = JSON.parse(answer.text) as { message?: unknown };
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON: the text itself below
  }
  return answer.text.slice(0, 200) || `HTTP ${answer.status}`;
}

export function jsonOf<T>(answer: Answer): T {
  return JSON.parse(answer.text) as T;
}

/** The service over kept-alive connections, at most `connections` at once. */
export class EdgewatchClient {
  private readonly pool: Pool;
  private readonly prefix: string;

  constructor(
    base: URL,
    private readonly apiKey: string,
    connections: number,
  ) {
    this.pool = new Pool(base.origin, {
      connections,
      connectTimeout: 5_000,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    this.prefix = base.pathname.replace(/\/+$/, '');
  }

  /** A user route, with the API key. */
  call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
    return this.request(method, path, { 'x-api-key': this.apiKey }, body);
  }

  /** An agent's report, with the node's token. */
  report(token: string, body: unknown): Promise<Answer> {
    return this.request('POST', '/api/v1/agent/report', { 'x-node-token': token }, body);
  }

  private async request(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<Answer> {
    const started = performance.now();
    try {
      const response = await this.pool.request({
        method,
        path: this.prefix + path,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: body === undefined ? null : JSON.stringify(body),
      });
      const text = await response.body.text();
      return {
        status: response.statusCode,
        headers: response.headers,
        text,
        ms: performance.now() - started,
      };
    } catch (error) {
      throw new RequestFailed(failureKind(error), error);
    }
  }

  /** Ends every connection, and any request still under way. */
  close(): Promise<void> {
    return this.pool.destroy();
  }
}
