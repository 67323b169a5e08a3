import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

/**
 * The spans edgewatch makes, through the OpenTelemetry API only (docs/decisions/0010-tracing.md). Until
 * `startTracing` registers an SDK (OTEL_EXPORTER_OTLP_ENDPOINT is set), `tracing` is false and every helper
 * here runs its work directly: no span, no context, nothing stored with a delivery.
 */
let tracing = false;
const tracer = trace.getTracer('edgewatch');

export function tracingEnabled(): boolean {
  return tracing;
}

/** Set by the SDK's start and stop (`tracing-sdk.ts`) only. */
export function setTracingEnabled(enabled: boolean): void {
  tracing = enabled;
}

function failed(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Runs `work` in a span, a child of the active one, which is active meanwhile: what `work` makes (a
 * notification, a delivery) is its child. The span ends when `work` settles, with its error if it threw.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracing) return work(undefined);
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The W3C `traceparent` of the active span, to store with work that another process does later. */
export function activeTraceparent(): string | null {
  if (!tracing || trace.getActiveSpan() === undefined) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/**
 * An outgoing request's span (kind CLIENT), a child of the stored `traceparent`, around `send`, which gets
 * the headers that carry the span on to the receiver. Without tracing or a stored parent: `send({})`.
 */
export async function clientSpan<T>(
  traceparent: string | null,
  name: string,
  attributes: Attributes,
  send: (headers: Record<string, string>, span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracing || traceparent === null) return send({}, undefined);
  const parent = propagation.extract(ROOT_CONTEXT, { traceparent });
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(parent, span), headers);
  try {
    return await send(headers, span);
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** A request's span (kind SERVER), a child of the caller's `traceparent` when it sent one. */
export function startServerSpan(
  name: string,
  headers: Record<string, string | string[] | undefined>,
  attributes: Attributes,
): { span: Span; context: Context } {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `next` (and all it starts) with `active` as the active context. */
export function withContext<T>(active: Context, next: () => T): T {
  return context.with(active, next);
}
