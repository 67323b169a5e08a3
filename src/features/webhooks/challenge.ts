import type { OutboundResponse } from '../../net/outbound.js';
import { randomToken } from '../../lib/tokens.js';
import type { SigningSecrets } from './secrets.js';
import { hmacHex, safeEqual } from './signing.js';

export const VERIFY_DEADLINE_MS = 3_000;

/** ≥ 32 URL-safe characters (43 here), fresh for every verification. */
export function newChallenge(): string {
  return randomToken();
}

/**
 * The URL with `challenge=<value>` added to its query. The existing query is kept as it is written: going
 * through `searchParams` would re-encode all of it (`%20` becoming `+`, `flag` becoming `flag=`).
 */
export function challengeUrl(url: string, challenge: string): string {
  const target = new URL(url);
  const parameter = `challenge=${encodeURIComponent(challenge)}`;
  target.search = target.search === '' ? parameter : `${target.search}&${parameter}`;
  return target.toString();
}

/**
 * Judges the endpoint's answer to a challenge. Returns undefined when it is right, else the exact
 * reason, phrased so the endpoint's developer knows what to change.
 */
export function challengeAnswerProblem(
  response: Pick<OutboundResponse, 'status' | 'body' | 'truncated'>,
  expected: SigningSecrets & { timestamp: string; challenge: string },
): string | undefined {
  if (response.status !== 200) return `The endpoint answered status ${response.status}; it must answer 200.`;
  if (response.truncated) return 'The answer is larger than 64 KiB; send only the JSON object.';
  let body: unknown;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return 'The answer body is not JSON; send {"challenge": "...", "challenge_response": "..."}.';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'The answer is JSON but not an object; send {"challenge": "...", "challenge_response": "..."}.';
  }
  const { challenge, challenge_response: answer } = body as Record<string, unknown>;
  if (typeof challenge !== 'string')
    return 'The answer has no "challenge" field; echo the challenge query parameter.';
  if (!safeEqual(challenge, expected.challenge)) {
    return 'The "challenge" in the answer differs from the one sent in the challenge query parameter.';
  }
  if (typeof answer !== 'string') return 'The answer has no "challenge_response" field.';
  // During a rotation's overlap the endpoint may still hold the previous secret: either one proves it.
  const rightWith = (secret: string) =>
    safeEqual(answer, hmacHex(secret, expected.timestamp, expected.challenge));
  const { secret, previousSecret } = expected;
  if (!rightWith(secret) && (previousSecret === undefined || !rightWith(previousSecret))) {
    return (
      'The "challenge_response" is wrong: it must be the lower-case hex HMAC-SHA256, keyed with the webhook ' +
      'secret, of the X-Service-Timestamp header value, a dot, and the challenge.'
    );
  }
  return undefined;
}
