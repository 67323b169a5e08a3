// The service's measurements: its latency at a steady rate of state changes, and the time from the first of a
// burst of changes to the last notification received.
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuBetween, databaseCpuMs } from '../jobs/postgres.js';
import { cpuTimeMsOf } from '../lib/processes.js';
import { percentile } from '../lib/stats.js';
import type { Collection, Receiver } from './receiver.js';
import { ReportSender, sendBurst, sendPaced } from './reports.js';
import { nodeName, reportBody } from './seed.js';
import { pendingNotifications, type ServiceUnderTest } from './service.js';

const DEADLINE_MS = 120_000;
/** Reports in flight during a throughput round: enough that the service, not the sender, sets the pace. */
export const REPORTS_IN_FLIGHT = 16;
/** At 20 a second one connection would do, but a slow answer must not hold the next report back. */
const LATENCY_CONNECTIONS = 8;

export interface LatencyResult {
  name: string;
  /** Timed changes with a notification. */
  changes: number;
  /** Timed changes without one by the deadline. */
  missing: number;
  failedReports: number;
  achievedRate: number;
  minMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface ProcessCpu {
  label: string;
  /** CPU time over the measured window; undefined when it could not be read. */
  ms: number | undefined;
}

export interface ThroughputRun {
  name: string;
  notifications: number;
  /** First change sent to the last notification received. */
  elapsedMs: number;
  perSecond: number;
  /** First change sent to the first notification received. */
  firstMs: number | undefined;
  /** First report sent to the last one answered (the service only). */
  reportsMs: number | undefined;
  /** Requests that carried the notifications (Alertmanager may put several alerts in one). */
  requests: number;
  /** TLS connections the sender opened to the receiver. */
  connections: number;
  /** The sending side's processes: the service (and PostgreSQL's backends), the floor, Alertmanager. */
  senders: ProcessCpu[];
  /** The runner's own CPU: the receiver, and the reports it sent (the service's rounds). */
  runnerCpuMs: number;
  duplicates: number;
  badSignatures: number;
  failed: number;
  /** Last notification received to the service having recorded every delivery (the service only). */
  settleMs: number | undefined;
}

export interface PostgresHandle {
  url: string;
  name: string;
}

/** Resolves with the time the collection is complete; throws if it is not by the deadline. */
export async function completed(collection: Collection, expected: number, what: string): Promise<number> {
  const timeout = sleep(DEADLINE_MS, 'timeout' as const, { ref: false });
  const result = await Promise.race([collection.done, timeout]);
  if (result === 'timeout') {
    throw new Error(
      `${what}: ${collection.count()} of ${expected} notifications after ${DEADLINE_MS / 1000} s`,
    );
  }
  return result;
}

/** Waits until the service has recorded every notification's delivery, so the next measurement starts idle. */
export async function settled(service: ServiceUnderTest): Promise<number> {
  const started = performance.now();
  while ((await pendingNotifications(service.api)) > 0) {
    if (performance.now() - started > DEADLINE_MS)
      throw new Error('the service did not record its deliveries');
    await sleep(20);
  }
  return performance.now() - started;
}

export function runnerCpuSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

export async function measureLatency(
  name: string,
  service: ServiceUnderTest,
  receiver: Receiver,
  options: { nodes: number[]; warmup: number; ratePerSecond: number },
): Promise<LatencyResult> {
  const arrivals = new Map<string, number>();
  const collection = receiver.collect({
    expected: options.nodes.length,
    onNotification: (body, at) =>
      arrivals.set((JSON.parse(body) as { node: { name: string } }).node.name, at),
  });
  const sender = new ReportSender(service.baseUrl, LATENCY_CONNECTIONS);
  let sentAt: number[];
  try {
    sentAt = await sendPaced(sender, options.nodes, reportBody(0), options.ratePerSecond);
  } finally {
    await sender.close();
  }
  await Promise.race([collection.done, sleep(30_000, undefined, { ref: false })]);
  await settled(service);
  const latencies: number[] = [];
  let missing = 0;
  for (let k = options.warmup; k < options.nodes.length; k += 1) {
    const node = options.nodes[k];
    const sent = sentAt[k];
    const arrived = node === undefined ? undefined : arrivals.get(nodeName(node));
    if (arrived === undefined || sent === undefined) missing += 1;
    else latencies.push(arrived - sent);
  }
  if (latencies.length === 0) throw new Error(`${name}: no notification arrived`);
  const timed = sentAt.slice(options.warmup);
  const span = (timed[timed.length - 1] ?? 0) - (timed[0] ?? 0);
  return {
    name,
    changes: latencies.length,
    missing,
    failedReports: sender.failed,
    achievedRate: span > 0 ? ((timed.length - 1) * 1000) / span : 0,
    minMs: Math.min(...latencies),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: Math.max(...latencies),
  };
}

export async function measureServiceThroughput(
  name: string,
  service: ServiceUnderTest,
  receiver: Receiver,
  options: {
    nodes: number[];
    round: number;
    postgres: PostgresHandle | undefined;
    /** Processes whose CPU counts, summed under each label; else the service's (PostgreSQL's comes apart). */
    cpuOf?: { label: string; pids: number[] }[];
  },
): Promise<ThroughputRun> {
  const expected = options.nodes.length;
  const body = reportBody(options.round - 1);
  const sender = new ReportSender(service.baseUrl, REPORTS_IN_FLIGHT);
  const collection = receiver.collect({ expected });
  const pg = options.postgres;
  const subjects = options.cpuOf ?? [{ label: 'service', pids: [service.pid] }];
  const before = {
    processes: subjects.map(({ pids }) => cpuTimeMsOf(pids)),
    postgres: pg === undefined ? undefined : await databaseCpuMs(pg.url, pg.name),
    runner: process.cpuUsage(),
  };
  let lastAt: number;
  let burst;
  try {
    const sending = sendBurst(sender, options.nodes, body, REPORTS_IN_FLIGHT);
    lastAt = await completed(collection, expected, name);
    burst = await sending;
  } finally {
    await sender.close();
  }
  const runnerCpuMs = runnerCpuSince(before.runner);
  const processesAfter = subjects.map(({ pids }) => cpuTimeMsOf(pids));
  const postgresAfter = pg === undefined ? undefined : await databaseCpuMs(pg.url, pg.name);
  const settleMs = await settled(service);
  const senders: ProcessCpu[] = subjects.map(({ label }, i) => {
    const [start, end] = [before.processes[i], processesAfter[i]];
    return { label, ms: start === undefined || end === undefined ? undefined : end - start };
  });
  if (pg !== undefined) senders.push({ label: 'PostgreSQL', ms: cpuBetween(before.postgres, postgresAfter) });
  const firstAt = collection.firstAt();
  return {
    name,
    notifications: collection.count(),
    elapsedMs: lastAt - burst.startedAt,
    perSecond: (expected * 1000) / (lastAt - burst.startedAt),
    firstMs: firstAt === undefined ? undefined : firstAt - burst.startedAt,
    reportsMs: burst.answeredAt - burst.startedAt,
    requests: collection.requests(),
    connections: collection.connections(),
    senders,
    runnerCpuMs,
    duplicates: collection.duplicates(),
    badSignatures: collection.badSignatures(),
    failed: sender.failed,
    settleMs,
  };
}
