/**
 * Latencies in logarithmic buckets, each 2 % wider than the one before, from 0.05 ms up: percentiles
 * within about 1 % in constant memory, however long the run.
 */
export class LatencyHistogram {
  private static readonly FLOOR_MS = 0.05;
  private static readonly GROWTH = Math.log(1.02);
  private readonly buckets: number[] = [];
  count = 0;

  record(ms: number): void {
    const ratio = Math.max(ms, LatencyHistogram.FLOOR_MS) / LatencyHistogram.FLOOR_MS;
    const bucket = Math.floor(Math.log(ratio) / LatencyHistogram.GROWTH);
    this.buckets[bucket] = (this.buckets[bucket] ?? 0) + 1;
    this.count++;
  }

  add(other: LatencyHistogram): void {
    other.buckets.forEach((count, bucket) => (this.buckets[bucket] = (this.buckets[bucket] ?? 0) + count));
    this.count += other.count;
  }

  /** The latency below which `fraction` of the recorded ones lie (the middle of its bucket); NaN if none. */
  percentile(fraction: number): number {
    if (this.count === 0) return NaN;
    const rank = Math.max(1, Math.ceil(fraction * this.count));
    let seen = 0;
    for (let bucket = 0; bucket < this.buckets.length; bucket++) {
      seen += this.buckets[bucket] ?? 0;
      if (seen >= rank) return LatencyHistogram.FLOOR_MS * Math.exp((bucket + 0.5) * LatencyHistogram.GROWTH);
    }
    return NaN;
  }
}

export interface Window {
  seconds: number;
  reports: number;
  p50: number;
  p99: number;
}

/** The stretch of recent time the progress line describes: steady at low rates, still quick to follow. */
const WINDOW_MS = 5_000;

/** What the report loop counts: accepted reports and their latency, errors by kind, missed turns. */
export class RunStats {
  reports = 0;
  missed = 0;
  readonly errors = new Map<string, number>();
  private readonly total = new LatencyHistogram();
  private current = new LatencyHistogram();
  private currentSince: number;
  /** The latest closed stretches, newest last, together no longer than WINDOW_MS. */
  private closed: { ms: number; latencies: LatencyHistogram }[] = [];

  constructor(private readonly now: () => number) {
    this.currentSince = now();
  }

  accepted(ms: number): void {
    this.reports++;
    this.total.record(ms);
    this.current.record(ms);
  }

  failed(kind: string): void {
    this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1);
  }

  /** Reports and latencies of about the last WINDOW_MS (at least the time since the previous call). */
  takeWindow(): Window {
    const at = this.now();
    this.closed.push({ ms: at - this.currentSince, latencies: this.current });
    this.current = new LatencyHistogram();
    this.currentSince = at;
    let ms = 0;
    let keep = 0;
    for (let i = this.closed.length - 1; i >= 0; i--) {
      const stretch = this.closed[i]!;
      if (keep > 0 && ms + stretch.ms > WINDOW_MS + 100) break;
      ms += stretch.ms;
      keep++;
    }
    this.closed = this.closed.slice(-keep);
    const latencies = new LatencyHistogram();
    for (const stretch of this.closed) latencies.add(stretch.latencies);
    return {
      seconds: ms / 1_000,
      reports: latencies.count,
      p50: latencies.percentile(0.5),
      p99: latencies.percentile(0.99),
    };
  }

  percentile(fraction: number): number {
    return this.total.percentile(fraction);
  }
}

/** `3 (HTTP 429: 2, refused: 1)`, or `0`. */
export function formatErrors(errors: ReadonlyMap<string, number>): string {
  const entries = [...errors.entries()].filter(([, count]) => count > 0);
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return '0';
  const kinds = entries.sort((a, b) => b[1] - a[1]).map(([kind, count]) => `${kind}: ${count}`);
  return `${total} (${kinds.join(', ')})`;
}

export function formatMs(ms: number): string {
  if (Number.isNaN(ms)) return '-';
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 10_000) return `${Math.round(ms)} ms`;
  return `${(ms / 1_000).toFixed(1)} s`;
}

/** `1 node`, `3 nodes`. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** `0:07`, `12:30`, `1:02:03`. */
export function formatElapsed(seconds: number): string {
  const whole = Math.floor(seconds);
  const h = Math.floor(whole / 3_600);
  const m = Math.floor((whole % 3_600) / 60);
  const s = String(whole % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
