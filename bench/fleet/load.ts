// Agent reports over HTTP. The steady load is open loop: report k is due at t0 + k / rate and is sent then
// whether or not earlier ones were answered, as 100,000 independent agents would send them, so a server that
// falls behind shows in the latency (reports wait for a free connection) instead of slowing the sender down.
// Latency counts from the send; how late the sender itself was (its timer ticks every millisecond) is kept
// apart, to show that the sender kept up.
// (autocannon's overallRate gives each connection a budget per second that it spends back to back at the
// start of each second: bursts of the whole second's reports, not a steady arrival rate.)
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import type { SimulatedFleet } from './agents.js';

export const REPORT_PATH = '/api/v1/agent/report';

/** More reports than this waiting for an answer: the server has fallen too far behind to keep sending. */
const MAX_IN_FLIGHT = 20_000;
const DRAIN_TIMEOUT_MS = 30_000;

export interface ReportClient {
  /** Report k of the run goes to API process k mod n. */
  send(k: number, node: number, body: string): Promise<number>;
  close(): Promise<void>;
}

/** Kept-alive connections to each API process. */
export function reportClient(baseUrls: string[], fleet: SimulatedFleet, connections: number): ReportClient {
  const pools = baseUrls.map((url) => new Pool(url, { connections, pipelining: 1 }));
  let firstFailure: string | undefined;
  let closing: Promise<void> | undefined;
  return {
    async send(k, node, body) {
      const pool = pools[k % pools.length];
      if (pool === undefined) throw new Error('no API process');
      const response = await pool.request({
        method: 'POST',
        path: REPORT_PATH,
        headers: { 'content-type': 'application/json', 'x-node-token': fleet.token(node) },
        body,
      });
      if (response.statusCode >= 200 && response.statusCode < 300) {
        await response.body.dump();
      } else {
        const text = await response.body.text();
        firstFailure ??= `${response.statusCode}: ${text.slice(0, 300)}`;
      }
      return response.statusCode;
    },
    close() {
      closing ??= Promise.all(pools.map((pool) => pool.close())).then(() => {
        if (firstFailure !== undefined) process.stderr.write(`  first failed report: ${firstFailure}\n`);
      });
      return closing;
    },
  };
}

export interface PrimeResult {
  reports: number;
  ms: number;
  failed: number;
}

/**
 * Every node reports its state once, `concurrency` reports in flight at a time: the service applies each
 * node's first report as it would a real agent's, and afterwards every node's stored state is the one its
 * agent sends. The nodes go in the order of the steady stream, which starts over from its first node, so
 * that no node waits much longer than one pass between its two reports.
 */
export async function primeFleet(
  client: ReportClient,
  fleet: SimulatedFleet,
  concurrency: number,
): Promise<PrimeResult> {
  const started = performance.now();
  let next = 0;
  let failed = 0;
  const lane = async () => {
    while (next < fleet.size) {
      const node = fleet.nodeAt(next);
      next += 1;
      const status = await client.send(node, node, fleet.body(node)).catch(() => 0);
      if (status < 200 || status > 299) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { reports: fleet.size, ms: performance.now() - started, failed };
}

export interface PacedPlan {
  ratePerSecond: number;
  /** Untimed seconds at the same rate before the measured window. */
  warmupSeconds: number;
  durationSeconds: number;
  /** Every n-th report carries a change (one of the node's tunnels or services flips first). */
  changeEvery: number;
  /** Called at the first and last moment of the measured window (CPU readings). */
  onWindow?: (edge: 'start' | 'end') => void;
}

export interface PacedResult {
  /** Reports due in the measured window. */
  offered: number;
  offeredPerSecond: number;
  /** Answered 2xx, of those due in the window (some perhaps after it). */
  answered: number;
  /**
   * 2xx answers that arrived within the window, whenever their report was due, per second: the offered rate
   * when the server keeps up, its capacity when it does not (it is then still working off earlier reports).
   */
  answeredInWindow: number;
  achievedPerSecond: number;
  failed: number;
  /** Not sent: too many were waiting for an answer. */
  skipped: number;
  /** Reports with a change sent over the warm-up and the window. */
  changes: number;
  /** Sent to answered, in ms, for the answered ones. */
  latenciesMs: Float64Array;
  /** How late the sender sent a report after it was due: its own share of the latency. */
  sendLagsMs: Float64Array;
  windowMs: number;
  /** CPU time of this process (the sender) over the window. */
  senderCpuMs: number;
  statuses: Record<string, number>;
}

/** The steady stream: node after node in the fleet's order, at a fixed rate, for warm-up plus window. */
export async function runPaced(
  client: ReportClient,
  fleet: SimulatedFleet,
  plan: PacedPlan,
): Promise<PacedResult> {
  const intervalMs = 1000 / plan.ratePerSecond;
  const warmup = Math.round(plan.ratePerSecond * plan.warmupSeconds);
  const timed = Math.round(plan.ratePerSecond * plan.durationSeconds);
  const total = warmup + timed;
  const latencies = new Float64Array(timed).fill(Number.NaN);
  const lags = new Float64Array(timed);
  const statuses: Record<string, number> = {};
  const pending = new Set<Promise<void>>();
  let answered = 0;
  let answeredInWindow = 0;
  let failed = 0;
  let skipped = 0;
  let changes = 0;
  let senderCpuAtStart: NodeJS.CpuUsage | undefined;

  const t0 = performance.now() + 50;
  const windowStart = t0 + warmup * intervalMs;
  const windowEnd = t0 + total * intervalMs;
  const dispatch = (k: number, due: number) => {
    const index = k - warmup;
    const sentAt = performance.now();
    if (index >= 0) lags[index] = sentAt - due;
    if (pending.size >= MAX_IN_FLIGHT) {
      if (index >= 0) skipped += 1;
      return;
    }
    const node = fleet.nodeAt(k);
    if (k % plan.changeEvery === plan.changeEvery - 1) {
      fleet.flip(node);
      changes += 1;
    }
    const sent = client.send(k, node, fleet.body(node)).then(
      (status) => {
        statuses[status] = (statuses[status] ?? 0) + 1;
        const at = performance.now();
        const ok = status >= 200 && status < 300;
        if (ok && at >= windowStart && at <= windowEnd) answeredInWindow += 1;
        if (index < 0) return;
        if (ok) {
          latencies[index] = at - sentAt;
          answered += 1;
        } else {
          failed += 1;
        }
      },
      () => {
        statuses.error = (statuses.error ?? 0) + 1;
        if (index >= 0) failed += 1;
      },
    );
    pending.add(sent);
    void sent.finally(() => pending.delete(sent));
  };

  let k = 0;
  while (k < total) {
    const now = performance.now();
    if (senderCpuAtStart === undefined && now >= windowStart) {
      senderCpuAtStart = process.cpuUsage();
      plan.onWindow?.('start');
    }
    const due = Math.min(total, Math.floor((now - t0) / intervalMs) + 1);
    for (; k < due; k += 1) dispatch(k, t0 + k * intervalMs);
    // A timer of 1 ms sends a handful of reports per tick at 3,333/s: close to evenly spaced, little CPU.
    if (k < total) await sleep(Math.max(0, Math.min(1, t0 + k * intervalMs - performance.now())));
  }
  const endWait = windowEnd - performance.now();
  if (endWait > 0) await sleep(endWait);
  const senderCpu = process.cpuUsage(senderCpuAtStart);
  plan.onWindow?.('end');
  await Promise.race([Promise.all(pending), sleep(DRAIN_TIMEOUT_MS, undefined, { ref: false })]);
  const stillPending = pending.size;
  const answeredLatencies = latencies.filter((value) => !Number.isNaN(value));
  return {
    offered: timed,
    offeredPerSecond: plan.ratePerSecond,
    answered,
    answeredInWindow,
    achievedPerSecond: (answeredInWindow * 1000) / (windowEnd - windowStart),
    failed: failed + stillPending,
    skipped,
    changes,
    latenciesMs: answeredLatencies,
    sendLagsMs: lags,
    windowMs: windowEnd - windowStart,
    senderCpuMs: (senderCpu.user + senderCpu.system) / 1000,
    statuses,
  };
}
