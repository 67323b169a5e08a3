import { setTimeout as sleep } from 'node:timers/promises';
import type { QueueUnderTest } from './queues.js';

/**
 * Wall-clock time in ms with sub-ms resolution. Every process on the machine reads the same wall clock, so a
 * commit time taken in one process and a start time taken in another can be subtracted.
 */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Enqueues jobs 0 … count − 1, `batch` to a statement, one statement after the other; returns the ms it took. */
export async function enqueueInBatches(queue: QueueUnderTest, count: number, batch: number): Promise<number> {
  const started = performance.now();
  for (let first = 0; first < count; first += batch) {
    const seqs = Array.from({ length: Math.min(batch, count - first) }, (_, n) => first + n);
    await queue.enqueueBatch(seqs);
  }
  return performance.now() - started;
}

export interface PacedPlan {
  ratePerSecond: number;
  firstSeq: number;
  count: number;
}

/**
 * Open loop at a steady rate: job `firstSeq + i` is enqueued (one job, one transaction) at t0 + i / rate,
 * whether or not the earlier ones have committed. Its commit time, taken as soon as the transaction
 * resolves, goes to `commits[seq]`.
 */
export async function enqueuePaced(
  queue: QueueUnderTest,
  plan: PacedPlan,
  commits: (number | null)[],
): Promise<void> {
  const intervalMs = 1000 / plan.ratePerSecond;
  const t0 = performance.now() + 10;
  const pending: Promise<void>[] = [];
  for (let i = 0; i < plan.count; i += 1) {
    const wait = t0 + i * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    const seq = plan.firstSeq + i;
    pending.push(
      queue.enqueueOne(seq).then(() => {
        commits[seq] = wallClockMs();
      }),
    );
  }
  await Promise.all(pending);
}
