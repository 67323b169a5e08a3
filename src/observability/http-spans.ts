import { SpanStatusCode, type Context, type Span } from '@opentelemetry/api';
import type { FastifyRequest } from 'fastify';
import type { App } from '../http/types.js';
import { startServerSpan, withContext } from './tracing.js';

/**
 * A SERVER span for every request, continuing the caller's trace when it sent `traceparent`. The span is
 * made active for the hooks and the handler (the body is read in between, on the socket's own context, so
 * `preHandler` makes it active again): what the request starts is its child.
 */
export function addServerSpans(app: App): void {
  const spans = new WeakMap<FastifyRequest, { span: Span; context: Context }>();
  const end = (request: FastifyRequest, status: number | undefined) => {
    const started = spans.get(request);
    if (started === undefined) return;
    spans.delete(request);
    if (status !== undefined) started.span.setAttribute('http.response.status_code', status);
    if (status === undefined || status >= 500) started.span.setStatus({ code: SpanStatusCode.ERROR });
    started.span.end();
  };
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    const started = startServerSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      request.headers,
      {
        'http.request.method': request.method,
        'url.path': request.url.split('?')[0] ?? '/',
        ...(route === undefined ? {} : { 'http.route': route }),
      },
    );
    spans.set(request, started);
    withContext(started.context, done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const started = spans.get(request);
    if (started === undefined) return done();
    withContext(started.context, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, undefined);
    done();
  });
}
