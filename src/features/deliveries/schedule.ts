import { JITTER } from '../../jobs/backoff.js';

/** Retry-After values above this are not honoured (docs/rules/webhooks.md#retry-after): the schedule applies. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The wait after a webhook's `failures`-th consecutive failed request: that step of the schedule (the
 * last one repeating), ±20 %; a Retry-After the endpoint sent, up to an hour, instead. Pure.
 */
export function webhookRetryDelay(
  failures: number,
  scheduleMs: readonly number[],
  retryAfterMs: number | undefined,
  random: number = Math.random(),
): number {
  if (retryAfterMs !== undefined && retryAfterMs >= 0 && retryAfterMs <= MAX_RETRY_AFTER_MS)
    return retryAfterMs;
  const step = scheduleMs[Math.min(Math.max(failures, 1), scheduleMs.length) - 1] ?? 0;
  return Math.round(step * (1 - JITTER + 2 * JITTER * random));
}

/** A Retry-After header (seconds, or an HTTP date) as a wait from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1_000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
