import type { AppContext } from '../../context.js';
import { newId } from '../../lib/ids.js';
import { OutboundError } from '../../net/outbound.js';
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

/** One POST of a delivery (signed, for a webhook) through the guarded client, outside any transaction. Never throws for the endpoint's faults. */
export async function sendDelivery(ctx: AppContext, delivery: ClaimedDelivery): Promise<SendOutcome> {
  const at = ctx.clock.now();
  const message = {
    deliveryId: delivery.id,
    payload: delivery.payload,
    notificationId: delivery.notification_id,
  };
  const request = endpointRequest(ctx, delivery, message, at);
  const attempt = { id: newId(at), deliveryId: delivery.id, at };
  try {
    const response = await ctx.webhookClient.send({
      ...request,
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
    if (!(error instanceof OutboundError)) throw error;
    return {
      ok: false,
      status: null,
      retryAfter: undefined,
      attempt: {
        ...attempt,
        durationMs: ctx.clock.now() - at,
        statusCode: null,
        failure: error.kind,
        error: error.message,
        response: null,
      },
    };
  }
}
