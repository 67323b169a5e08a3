/** When to try again after a failed request: full-jitter exponential backoff, and the server's Retry-After. */

const FIRST_DELAY_MS = 1_000;
const RETRY_AFTER_MIN_MS = 1_000;
const RETRY_AFTER_MAX_MS = 3_600_000;

/**
 * The delay before try `attempt` + 1 (attempt counts from 1): anywhere between 0 and 1 s · 2^(attempt−1),
 * capped, so that a fleet cut off together does not come back together.
 */
export function backoffDelayMs(attempt: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, FIRST_DELAY_MS * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(random() * ceiling);
}

/**
 * A Retry-After header as a delay: seconds or an HTTP date (against the server's own Date when it sent
 * one, so that a skewed clock does not stretch it), clamped to 1 s – 1 h; undefined when absent or unreadable.
 */
export function retryAfterMs(
  header: string | null,
  serverDate: string | null,
  now: number,
): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  let delay: number;
  if (/^\d+$/.test(value)) delay = Number(value) * 1_000;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    const serverNow = serverDate === null ? NaN : Date.parse(serverDate);
    delay = at - (Number.isNaN(serverNow) ? now : serverNow);
  }
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, delay));
}
