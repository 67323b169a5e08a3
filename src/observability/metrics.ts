import type { FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export interface HttpMetrics {
  registry: Registry;
  observe(request: FastifyRequest, reply: FastifyReply): void;
}

/** The process's one registry, with Node's default metrics; every part registers its own on it. */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

export function createHttpMetrics(registry: Registry): HttpMetrics {
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method, route pattern and status.',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  // prom-client hashes the label set on every call; a route's children are looked up once instead.
  const children = new Map<string, { count: () => void; time: (seconds: number) => void }>();
  const childFor = (method: string, route: string, statusCode: number) => {
    const key = `${method} ${route} ${statusCode}`;
    let child = children.get(key);
    if (child === undefined) {
      const labels = { method, route, status_code: String(statusCode) };
      const counter = requests.labels(labels);
      const histogram = duration.labels(labels);
      child = { count: () => counter.inc(), time: (seconds) => histogram.observe(seconds) };
      children.set(key, child);
    }
    return child;
  };
  return {
    registry,
    observe(request, reply) {
      // The route pattern, not the URL, keeps label cardinality bounded.
      const child = childFor(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
      child.count();
      child.time(reply.elapsedTime / 1000);
    },
  };
}
