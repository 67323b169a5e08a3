import { SpanStatusCode, type Span } from '@opentelemetry/api';
import type { AppContext } from '../../context.js';
import { newId } from '../../lib/ids.js';
import { OutboundError } from '../../net/outbound.js';
import { clientSpan } from '../../observability/tracing.js';
import type { ClaimedDelivery } from './claim-repo.js';
import type { AttemptRecord } from './repo.js';
import { endpointRequest } from './request.js';

const RESPONSE_KEPT_BYTES = 1_024;

/** What one request for a delivery came to, as the log keeps it, with the endpoint's Retry-After. */
export interface SendOutcome {
  attempt: AttemptRecord;
  /** 2xx: delivered. */
  ok: boolean;
  status: number | null;
  retryAfter: string | undefined;
}

/**
 * One POST of a delivery (signed, for a webhook) through the guarded client, outside any transaction. Never
 * throws: whatever goes wrong between the claim and the answer, the endpoint's fault or ours (a secret that
 * cannot be opened, an answer the client cannot read), is a failed attempt with its reason, which counts
 * like any other failure (docs/rules/webhooks.md#deliveries).
 */
export function sendDelivery(ctx: AppContext, delivery: ClaimedDelivery): Promise<SendOutcome> {
  const attributes = {
    'http.request.method': 'POST',
    'edgewatch.delivery.id': delivery.id,
    'edgewatch.webhook.id': delivery.webhook_id,
    'edgewatch.endpoint.kind': delivery.kind,
  };
  return clientSpan(delivery.traceparent, 'POST', attributes, async (traceHeaders, span) => {
    const outcome = await requestDelivery(ctx, delivery, traceHeaders, span);
    if (outcome.status !== null) span?.setAttribute('http.response.status_code', outcome.status);
    if (!outcome.ok) {
      span?.setAttribute('error.type', outcome.attempt.failure ?? 'unknown');
      span?.setStatus({ code: SpanStatusCode.ERROR });
    }
    return outcome;
  });
}

async function requestDelivery(
  ctx: AppContext,
  delivery: ClaimedDelivery,
  traceHeaders: Record<string, string>,
  span: Span | undefined,
): Promise<SendOutcome> {
  const at = ctx.clock.now();
  const attempt = { id: newId(at), deliveryId: delivery.id, at };
  try {
    const message = {
      deliveryId: delivery.id,
      payload: delivery.payload,
      notificationId: delivery.notification_id,
    };
    const request = endpointRequest(ctx, delivery, message, at);
    // The host only: a channel's URL holds its secret in the path.
    const url = new URL(request.url);
    span?.setAttributes({
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'http:' ? 80 : 443)),
    });
    const response = await ctx.webhookClient.send({
      ...request,
      headers: { ...request.headers, ...traceHeaders },
      method: 'POST',
      deadlineMs: ctx.config.deliveryTimeoutMs,
      maxBodyBytes: RESPONSE_KEPT_BYTES,
    });
    const ok = response.status >= 200 && response.status < 300;
    return {
      ok,
      status: response.status,
      retryAfter: response.headers['retry-after'],
      attempt: {
        ...attempt,
        durationMs: response.elapsedMs,
        statusCode: response.status,
        failure: ok ? null : 'bad_status',
        error: ok ? null : `answered ${response.status}`,
        response: response.body.subarray(0, RESPONSE_KEPT_BYTES).toString('utf8'),
      },
    };
  } catch (error) {
    const failure = error instanceof OutboundError ? error : unexpected(ctx, delivery, error);
    return {
      ok: false,
      status: null,
      retryAfter: undefined,
      attempt: {
        ...attempt,
        durationMs: ctx.clock.now() - at,
        statusCode: null,
        failure: failure.kind,
        error: failure.message,
        response: null,
      },
    };
  }
}

/** A throw that is no typed network failure: logged at `error`, and recorded as the attempt's failure. */
function unexpected(ctx: AppContext, delivery: ClaimedDelivery, error: unknown) {
  ctx.logger.error(
    { err: error, delivery: delivery.id, webhook: delivery.webhook_id },
    'a delivery request failed unexpectedly',
  );
  const reason = error instanceof Error ? error.message : String(error);
  return { kind: 'unexpected', message: `the request failed unexpectedly: ${reason}` };
}
