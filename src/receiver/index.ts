/**
 * Receiver kit: what a webhook endpoint needs to answer edgewatch's challenge and to check the
 * signature of every notification, by the `X-Service-*` headers or, for a `whsec_` secret, by the Standard
 * Webhooks ones. Standalone on purpose (node:crypto only), so it can be copied into a receiver as is;
 * docs/receiving-webhooks.md shows it in a complete server.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The seven notification types and the conditions of each: the values of an alert's `alert_me`, and what
 * a notification's `current_state` reports for the state types. edgewatch itself reads them from here.
 */
export const NOTIFICATION_CONDITIONS = {
  NODE_STATE_CHANGE: ['ALIVE', 'UNREACHABLE'],
  TUNNEL_STATE_CHANGE: ['CONNECTED', 'TERMINATED'],
  SERVICE_STATE_CHANGE: ['HEALTHY', 'UNHEALTHY', 'TERMINATED'],
  NODE_IP_CHANGE: ['PRIVATE_IP', 'PUBLIC_IP'],
  CERT_EXPIRY: ['80', '100'],
  HEADLESS_EXPIRY: ['80', '100'],
  NODE_UPGRADE: ['ENABLED', 'DISABLED', 'SUCCESSFUL', 'FAILED'],
} as const;

export type NotificationType = keyof typeof NOTIFICATION_CONDITIONS;

/** The body of every notification (docs/notifications.md), the same shape for all seven types. */
export interface NotificationBody {
  /** The event's id: the same event sent to several alerts or channels keeps it. */
  id: string;
  type: NotificationType;
  /** A person's name for the type, e.g. "Node state change". */
  display_type: string;
  /** The `alert_me` value the event matched. */
  condition: string;
  /** Per resource, strictly increasing: order a resource's notifications by it. */
  sequence: number;
  occurred_at: string;
  organization: { id: string; name: string };
  /** The node the resource is (or is on). */
  node: { id: string; name: string };
  resource: { kind: 'node' | 'tunnel' | 'service'; id: string; name: string };
  previous_state: string | null;
  current_state: string;
  alert: { id: string; name: string } | null;
  message: string;
  test: boolean;
}

/** lower-hex HMAC-SHA256(secret, timestamp + "." + payload): the construction for both uses. */
export function hmacHex(secret: string, timestamp: string, payload: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
}

/** Constant-time comparison of two texts (false at once when the lengths differ, which leaks nothing). */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The body a receiver answers to `GET <url>?challenge=...` (with the X-Service-Timestamp header). */
export function answerChallenge(
  secret: string,
  timestamp: string,
  challenge: string,
): { challenge: string; challenge_response: string } {
  return { challenge, challenge_response: hmacHex(secret, timestamp, challenge) };
}

/** Whether `response` is the right challenge_response for this secret, timestamp and challenge. */
export function verifyChallengeResponse(
  secret: string,
  timestamp: string,
  challenge: string,
  response: string,
): boolean {
  return sameText(response, hmacHex(secret, timestamp, challenge));
}

export interface SignedRequest {
  /** The raw body exactly as received (before any JSON parsing). */
  body: string;
  /** X-Service-Timestamp: milliseconds since the epoch. */
  timestamp: string | undefined;
  /** X-Service-Signature: `v1=<hex>`, or `v1=<hex>,<hex>` while a rotated-out secret still signs. */
  signature: string | undefined;
}

export type SignatureVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Checks a notification: the signature over timestamp + "." + raw body, and a timestamp no further
 * than `toleranceMs` (default 5 minutes) from now, which refuses replays of old deliveries. After a secret
 * rotation the header carries the new and the previous secret's signatures, comma-separated: one matching
 * the secret held is enough, whichever of the two it holds.
 */
export function verifySignature(
  secret: string,
  request: SignedRequest,
  options: { now?: number; toleranceMs?: number } = {},
): SignatureVerdict {
  const { timestamp, signature } = request;
  if (timestamp === undefined || !/^\d{1,16}$/.test(timestamp))
    return { ok: false, reason: 'missing or malformed timestamp' };
  const now = options.now ?? Date.now();
  if (Math.abs(now - Number(timestamp)) > (options.toleranceMs ?? 300_000)) {
    return { ok: false, reason: 'timestamp too far from now' };
  }
  if (signature === undefined || !signature.startsWith('v1='))
    return { ok: false, reason: 'missing or malformed signature' };
  const expected = hmacHex(secret, timestamp, request.body);
  const given = signature.slice(3).split(',');
  if (!given.some((one) => sameText(one, expected))) return { ok: false, reason: 'signature mismatch' };
  return { ok: true };
}

const STANDARD_SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
const STANDARD_KEY_BYTES = { min: 24, max: 64 };

/**
 * The Standard Webhooks key of a `whsec_<base64>` secret (24–64 bytes once decoded); undefined for any
 * other secret, which is signed by the `X-Service-*` headers alone.
 */
export function standardWebhooksKey(secret: string): Buffer | undefined {
  const encoded = STANDARD_SECRET.exec(secret)?.[1];
  if (encoded === undefined) return undefined;
  const key = Buffer.from(encoded, 'base64');
  const exact = key.toString('base64').replace(/=+$/, '') === encoded.replace(/=+$/, '');
  return exact && key.length >= STANDARD_KEY_BYTES.min && key.length <= STANDARD_KEY_BYTES.max
    ? key
    : undefined;
}

/** `v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>`: the `webhook-signature` header. */
export function standardSignature(key: Buffer, id: string, timestamp: string, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

export interface StandardSignedRequest {
  /** The raw body exactly as received. */
  body: string;
  /** webhook-id: the delivery's id, the same on every retry. */
  id: string | undefined;
  /** webhook-timestamp: seconds since the epoch. */
  timestamp: string | undefined;
  /** webhook-signature: one or more `v1,<base64>`, separated by spaces. */
  signature: string | undefined;
}

/**
 * Checks a notification by its Standard Webhooks headers, as the specification's libraries do: one of the
 * signatures matches, and the timestamp is no further than `toleranceMs` (default 5 minutes) from now.
 */
export function verifyStandardSignature(
  secret: string,
  request: StandardSignedRequest,
  options: { now?: number; toleranceMs?: number } = {},
): SignatureVerdict {
  const key = standardWebhooksKey(secret);
  if (key === undefined) return { ok: false, reason: 'the secret is not a whsec_ secret' };
  const { id, timestamp, signature } = request;
  if (id === undefined || id === '') return { ok: false, reason: 'missing webhook-id' };
  if (timestamp === undefined || !/^\d{1,13}$/.test(timestamp))
    return { ok: false, reason: 'missing or malformed timestamp' };
  if (Math.abs((options.now ?? Date.now()) - Number(timestamp) * 1000) > (options.toleranceMs ?? 300_000))
    return { ok: false, reason: 'timestamp too far from now' };
  const expected = standardSignature(key, id, timestamp, request.body);
  const given = (signature ?? '').split(' ').filter((one) => one.startsWith('v1,'));
  if (given.length === 0) return { ok: false, reason: 'missing or malformed signature' };
  return given.some((one) => sameText(one, expected))
    ? { ok: true }
    : { ok: false, reason: 'signature mismatch' };
}

/**
 * Checks a notification by whichever scheme it carries: the Standard Webhooks headers when the secret is a
 * `whsec_` one and they are present, else the `X-Service-*` ones. Header names in lower case, as Node gives them.
 */
export function verifyNotification(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  options: { now?: number; toleranceMs?: number } = {},
): SignatureVerdict {
  const header = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(' ') : value;
  };
  if (standardWebhooksKey(secret) !== undefined && header('webhook-signature') !== undefined) {
    const request = { body, id: header('webhook-id'), timestamp: header('webhook-timestamp') };
    return verifyStandardSignature(secret, { ...request, signature: header('webhook-signature') }, options);
  }
  const request = {
    body,
    timestamp: header('x-service-timestamp'),
    signature: header('x-service-signature'),
  };
  return verifySignature(secret, request, options);
}
