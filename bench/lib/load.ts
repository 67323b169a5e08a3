import autocannon from 'autocannon';

export interface LoadRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  connections: number;
  durationSeconds: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Latency percentiles in milliseconds (autocannon records whole milliseconds). */
  p50Ms: number;
  p99Ms: number;
  total: number;
  /** Answers outside 2xx, and connection errors or timeouts: any of these spoils the figures. */
  non2xx: number;
  errors: number;
}

/** Closed-loop load: `connections` clients, each sending its next request when the last one answered. */
export async function runLoad(
  baseUrl: string,
  request: LoadRequest,
  options: LoadOptions,
): Promise<LoadResult> {
  const result = await autocannon({
    url: baseUrl + request.path,
    method: request.method ?? 'GET',
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
    connections: options.connections,
    duration: options.durationSeconds,
  });
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** One request, to check a scenario answers 2xx before it is measured. */
export async function probe(
  baseUrl: string,
  request: LoadRequest,
): Promise<{ status: number; text: string }> {
  const response = await fetch(baseUrl + request.path, {
    method: request.method ?? 'GET',
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
    signal: AbortSignal.timeout(5_000),
  });
  return { status: response.status, text: await response.text() };
}
