/** Nearest-rank percentile (0 < p ≤ 100) of durations in ms. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('no values');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  const value = sorted[Math.min(rank, sorted.length) - 1];
  if (value === undefined) throw new Error('no values');
  return value;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}
