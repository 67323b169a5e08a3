import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The one construction for challenges and notification signatures:
 * lower-hex HMAC-SHA256(secret, timestamp + "." + payload), UTF-8 throughout.
 */
export function hmacHex(secret: string, timestamp: string, payload: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
}

export function signatureHeader(secret: string, timestamp: string, body: string): string {
  return `v1=${hmacHex(secret, timestamp, body)}`;
}

/** Constant-time comparison of two texts (false at once when the lengths differ, which leaks nothing). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
