import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, JITTER, type BackoffPolicy } from '../src/jobs/backoff.js';

const policy: BackoffPolicy = { baseMs: 1_000, maxMs: 60_000 };
const HIGHEST_RANDOM = 1 - Number.EPSILON;

describe('backoffDelay', () => {
  it('spreads every wait by 20 % both ways around the unjittered value', () => {
    expect(JITTER).toBe(0.2);
    expect(backoffDelay(1, policy, 0)).toBe(800);
    expect(backoffDelay(1, policy, 0.5)).toBe(1_000);
    expect(backoffDelay(1, policy, HIGHEST_RANDOM)).toBe(1_200);
    expect(backoffDelay(3, policy, 0)).toBe(3_200);
    expect(backoffDelay(3, policy, 0.25)).toBe(3_600);
    expect(backoffDelay(3, policy, HIGHEST_RANDOM)).toBe(4_800);
  });

  it('doubles the wait with every failure from the base', () => {
    const middle = [1, 2, 3, 4, 5, 6].map((failures) => backoffDelay(failures, policy, 0.5));
    expect(middle).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000]);
  });

  it('caps the wait at maxMs before the jitter', () => {
    for (const failures of [7, 8, 20, 40, 41, 1_000, Number.MAX_SAFE_INTEGER]) {
      expect(backoffDelay(failures, policy, 0.5)).toBe(60_000);
      expect(backoffDelay(failures, policy, 0)).toBe(48_000);
      expect(backoffDelay(failures, policy, HIGHEST_RANDOM)).toBe(72_000);
    }
  });

  it('waits the base after a first failure (and for a count below one)', () => {
    expect(backoffDelay(0, policy, 0.5)).toBe(1_000);
    expect(backoffDelay(-3, policy, 0.5)).toBe(1_000);
  });

  it('has the documented default: 5 s doubling up to one hour', () => {
    expect(DEFAULT_BACKOFF).toEqual({ baseMs: 5_000, maxMs: 3_600_000 });
    expect(backoffDelay(1, DEFAULT_BACKOFF, 0.5)).toBe(5_000);
    expect(backoffDelay(10, DEFAULT_BACKOFF, 0.5)).toBe(2_560_000);
    expect(backoffDelay(11, DEFAULT_BACKOFF, 0.5)).toBe(3_600_000);
  });

  it('draws its own jitter within the bounds, spread across them', () => {
    const samples = Array.from({ length: 2_000 }, () => backoffDelay(4, policy));
    for (const sample of samples) {
      expect(sample).toBeGreaterThanOrEqual(6_400);
      expect(sample).toBeLessThanOrEqual(9_600);
      expect(Number.isInteger(sample)).toBe(true);
    }
    // Spread over the range, not stuck at one value: jobs failing together come back apart.
    expect(Math.min(...samples)).toBeLessThan(7_000);
    expect(Math.max(...samples)).toBeGreaterThan(9_000);
    expect(new Set(samples).size).toBeGreaterThan(500);
  });
});
