import { hmacHex } from '../../receiver/index.js';

/**
 * The service signs with the receiver kit's own construction, lower-hex HMAC-SHA256(secret,
 * timestamp + "." + payload), so what we send and what receivers check cannot drift apart. Fixed
 * vectors and an openssl cross-check (test/webhook-rules.test.ts) pin the construction itself.
 */
export { hmacHex, sameText as safeEqual } from '../../receiver/index.js';

export function signatureHeader(secret: string, timestamp: string, body: string): string {
  return `v1=${hmacHex(secret, timestamp, body)}`;
}

/** The headers every notification (and a test) carries: the client's own, then the service's, which win. */
export function notificationHeaders(
  clientHeaders: Record<string, string>,
  signing: { secret: string; timestamp: string; deliveryId: string; body: string },
): Record<string, string> {
  return {
    ...clientHeaders,
    'Content-Type': 'application/json',
    'X-Service-Timestamp': signing.timestamp,
    'X-Service-Delivery': signing.deliveryId,
    'X-Service-Signature': signatureHeader(signing.secret, signing.timestamp, signing.body),
  };
}
