import { hmacHex, standardSignature, standardWebhooksKey } from '../../receiver/index.js';

/**
 * The service signs with the receiver kit's own constructions, so what we send and what receivers check
 * cannot drift apart: lower-hex HMAC-SHA256(secret, timestamp + "." + payload) for the `X-Service-*` headers,
 * and the Standard Webhooks signature for a `whsec_` secret. Fixed vectors, an openssl cross-check
 * (test/webhook-rules.test.ts) and the `standardwebhooks` package (test/standard-webhooks.test.ts) pin them.
 */
export { hmacHex, sameText as safeEqual } from '../../receiver/index.js';

export function signatureHeader(secret: string, timestamp: string, body: string): string {
  return `v1=${hmacHex(secret, timestamp, body)}`;
}

/**
 * The headers every notification (and a test) carries: the client's own, then the service's, which win.
 * A `whsec_` secret adds the three Standard Webhooks headers, at the same instant in seconds
 * (docs/rules/webhooks.md#signing).
 */
export function notificationHeaders(
  clientHeaders: Record<string, string>,
  signing: { secret: string; timestamp: string; deliveryId: string; body: string },
): Record<string, string> {
  const { secret, timestamp, deliveryId, body } = signing;
  const headers: Record<string, string> = {
    ...clientHeaders,
    'Content-Type': 'application/json',
    'X-Service-Timestamp': timestamp,
    'X-Service-Delivery': deliveryId,
    'X-Service-Signature': signatureHeader(secret, timestamp, body),
  };
  const key = standardWebhooksKey(secret);
  if (key === undefined) return headers;
  const seconds = String(Math.floor(Number(timestamp) / 1000));
  headers['webhook-id'] = deliveryId;
  headers['webhook-timestamp'] = seconds;
  headers['webhook-signature'] = standardSignature(key, deliveryId, seconds, body);
  return headers;
}
