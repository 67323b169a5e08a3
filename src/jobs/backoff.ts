export interface BackoffPolicy {
  /** Wait after the first failure. */
  baseMs: number;
  /** The longest wait, however many failures. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 5_000, maxMs: 3_600_000 };

/** Relative spread of every wait, both ways: many jobs failing together do not all come back together. */
export const JITTER = 0.2;

/**
 * The wait before the next run of a job that failed for the `failures`-th time in a row: the base
 * doubled per earlier failure, capped, then spread by ±20 %. `random` is in [0, 1).
 */
export function backoffDelay(
  failures: number,
  policy: BackoffPolicy,
  random: number = Math.random(),
): number {
  const exponential = policy.baseMs * 2 ** Math.max(0, Math.min(failures - 1, 40));
  const capped = Math.min(exponential, policy.maxMs);
  return Math.round(capped * (1 - JITTER + 2 * JITTER * random));
}
