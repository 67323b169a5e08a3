import { hmacHex, standardSignature, standardWebhooksKey } from '../../receiver/index.js';
import type { SigningSecrets } from './secrets.js';

/**
 * The service signs with the receiver kit's own constructions, so what we send and what receivers check
 * cannot drift apart: lower-hex HMAC-SHA256(secret, timestamp + "." + payload) for the `X-Service-*` headers,
 * and the Standard Webhooks signature for a `whsec_` secret. Fixed vectors, an openssl cross-check
 * (test/webhook-rules.test.ts) and the `standardwebhooks` package (test/standard-webhooks.test.ts) pin them.
 */
export { hmacHex, sameText as safeEqual } from '../../receiver/index.js';

/** `v1=<hex>`, or during a rotation's overlap `v1=<hex of the new secret>,<hex of the previous one>`. */
export function signatureHeader(
  secret: string,
  timestamp: string,
  body: string,
  previousSecret?: string,
): string {
  const previous = previousSecret === undefined ? '' : `,${hmacHex(previousSecret, timestamp, body)}`;
  return `v1=${hmacHex(secret, timestamp, body)}${previous}`;
}

/**
 * The headers every notification (and a test) carries: the client's own, then the service's, which win.
 * A `whsec_` secret adds the three Standard Webhooks headers, at the same instant in seconds
 * (docs/rules/webhooks.md#signing). With a previous secret still in its overlap, both signature headers
 * carry its signature after the new one's (docs/rules/webhooks.md#secret-rotation).
 */
export function notificationHeaders(
  clientHeaders: Record<string, string>,
  signing: SigningSecrets & { timestamp: string; deliveryId: string; body: string },
): Record<string, string> {
  const { secret, previousSecret, timestamp, deliveryId, body } = signing;
  const headers: Record<string, string> = {
    ...clientHeaders,
    'Content-Type': 'application/json',
    'X-Service-Timestamp': timestamp,
    'X-Service-Delivery': deliveryId,
    'X-Service-Signature': signatureHeader(secret, timestamp, body, previousSecret),
  };
  const keys = [secret, previousSecret].flatMap((one) => {
    const key = one === undefined ? undefined : standardWebhooksKey(one);
    return key === undefined ? [] : [key];
  });
  if (keys.length === 0) return headers;
  const seconds = String(Math.floor(Number(timestamp) / 1000));
  headers['webhook-id'] = deliveryId;
  headers['webhook-timestamp'] = seconds;
  // The specification's own form for several signatures: space-separated, any one of them may match.
  headers['webhook-signature'] = keys
    .map((key) => standardSignature(key, deliveryId, seconds, body))
    .join(' ');
  return headers;
}
