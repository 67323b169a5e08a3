// The notification measurements: the latency from a report to its notification at a steady rate of changes,
// and the time from the first of a burst of changes (or an anchor's requests) to the last notification received.
import { setTimeout as sleep } from 'node:timers/promises';
import type { AdminApi } from '../lib/api.js';
import * as pg from '../lib/postgres.js';
import { cpuTimeMs } from '../lib/processes.js';
import type { Receiver } from '../lib/receiver.js';
import { ReportSender, sendBurst, sendPaced } from '../lib/reports.js';
import { percentile, until, whole } from '../lib/report.js';
import { nodeName, nodeToken, reportBody } from './seed.js';

/** Reports in flight during a throughput round: enough that the service, not the sender, sets the pace. */
export const REPORTS_IN_FLIGHT = 16;

/** Starts reading a sending process's CPU; what it gives back ends the reading with the ms spent. */
export type Meter = () => Promise<() => Promise<Sender>>;
export const processMeter = (label: string, processes: { pid: number }[]): Meter => {
  const read = () => cpuTimeMs(...processes.map((p) => p.pid)) ?? NaN;
  return async () => {
    const before = read();
    return async () => ({ label, ms: read() - before });
  };
};
export const postgresMeter = ({ url, name }: { url: string; name: string }): Meter => {
  const read = () => pg.databaseCpuMs(url, name);
  return async () => {
    const before = await read();
    return async () => ({ label: 'PostgreSQL', ms: pg.cpuBetween(before, await read()) });
  };
};

export interface Deployment {
  /** Where the reports go, whose CPU counts, the database. */
  api: { baseUrl?: string; api?: AdminApi };
  meters: Meter[];
  postgres: { url: string; name: string } | undefined;
}

/** `senders`: CPU ms of the sending side's processes; `writes`: PostgreSQL's, per notification. */
export type ThroughputRun = Awaited<ReturnType<typeof timeBurst>> & {
  reportsMs?: number;
  writes?: pg.WriteCounters;
};

/** CPU µs per notification of the sending processes together, and of each, e.g. `service 310 + PostgreSQL 95`. */
export const cpuPerNotification = (run: ThroughputRun) =>
  (run.senders.reduce((sum, sender) => sum + (sender.ms ?? NaN), 0) * 1000) / run.notifications;
export const sendersCpu = (run: ThroughputRun) =>
  run.senders
    .map(({ label, ms }) => `${label} ${whole(((ms ?? NaN) * 1000) / run.notifications)}`)
    .join(' + ');

/** A warning for a round whose figures describe something else than intended. */
export function runWarnings(run: ThroughputRun, expected: number): string[] {
  const problems = [
    run.notifications === expected ? '' : `${run.notifications} of ${expected} notifications`,
    run.duplicates === 0 ? '' : `${run.duplicates} notifications received twice`,
    run.badSignatures === 0 ? '' : `${run.badSignatures} requests with a wrong signature`,
    run.failed === 0 ? '' : `${run.failed} requests not answered 2xx`,
  ].filter(Boolean);
  return problems.length === 0 ? [] : [`${run.name}: ${problems.join('; ')}`];
}

/** Until the service has recorded every notification's delivery, so the next measurement starts idle. */
const settled = (api: AdminApi) =>
  until(
    async () => (await api.count('/api/v2/notification?status=pending')) === 0,
    'recorded deliveries',
    20,
  );

/** One change per node, sent at `ratePerSecond`; the first `warmup` are not timed. */
type LatencyPlan = { nodes: number[]; warmup: number; ratePerSecond: number };

export async function measureLatency(name: string, d: Deployment, receiver: Receiver, plan: LatencyPlan) {
  const { nodes, warmup, ratePerSecond } = plan;
  const arrivals = new Map<string, number>();
  const collection = receiver.collect(nodes.length, (body, at) =>
    arrivals.set(JSON.parse(body).node.name, at),
  );
  // At 20 a second one connection would do, but a slow answer must not hold the next report back.
  const sender = new ReportSender([d.api.baseUrl!], nodeToken, 8);
  const report = (k: number) => ({ node: nodes[k]!, body: reportBody(0) });
  const { sentAt } = await sendPaced(sender, nodes.length, report, ratePerSecond);
  await sender.close();
  await Promise.race([collection.done, sleep(30_000, undefined, { ref: false })]);
  await settled(d.api.api!);
  const latencies = nodes.flatMap((node, k) => {
    const arrived = arrivals.get(nodeName(node));
    return k < warmup || arrived === undefined ? [] : [arrived - sentAt[k]!];
  });
  if (latencies.length === 0) throw new Error(`${name}: no notification arrived`);
  const missing = nodes.length - warmup - latencies.length;
  const problems = `${name}: ${missing} changes without a notification, ${sender.failed} reports failed`;
  const warning = missing + sender.failed === 0 ? undefined : problems;
  return { name, latencies, p50: percentile(latencies, 50), p99: percentile(latencies, 99), warning };
}

export type Send = () => Promise<{ failed?: number; reportsMs?: number; senders?: Sender[] }>;
type Sender = { label: string; ms: number | undefined };

/** Times `send` (which starts the burst) to the `count`-th distinct notification at the receiver. */
export async function timeBurst(name: string, to: Receiver, count: number, meters: Meter[], send: Send) {
  const collection = to.collect(count);
  const reading = await Promise.all(meters.map((meter) => meter()));
  const [runner, startedAt] = [process.cpuUsage(), performance.now()];
  const sending = send();
  const lastAt = await Promise.race([collection.done, sleep(120_000, undefined, { ref: false })]);
  if (lastAt === undefined)
    throw new Error(`${name}: ${collection.received.size} of ${count} notifications after 120 s`);
  const runnerCpu = process.cpuUsage(runner);
  return {
    name,
    notifications: collection.received.size,
    elapsedMs: lastAt - startedAt,
    perSecond: (count * 1000) / (lastAt - startedAt),
    senders: await Promise.all(reading.map((end) => end())),
    runnerCpuMs: (runnerCpu.user + runnerCpu.system) / 1000,
    duplicates: collection.duplicates,
    badSignatures: collection.badSignatures,
    failed: 0,
    ...(await sending),
  };
}

type Burst = { nodes: number[]; round: number };

export async function measureThroughput(name: string, d: Deployment, receiver: Receiver, burst: Burst) {
  const { nodes, round } = burst;
  const body = reportBody(round - 1);
  const sender = new ReportSender([d.api.baseUrl!], nodeToken, REPORTS_IN_FLIGHT);
  const plan = (k: number) => ({ node: nodes[k]!, body });
  const counters = () => pg.writeCounters(d.postgres!.url, d.postgres!.name);
  const before = d.postgres === undefined ? undefined : await counters();
  const run = await timeBurst(name, receiver, nodes.length, d.meters, async () => {
    const { startedAt, answeredAt } = await sendBurst(sender, nodes.length, plan, REPORTS_IN_FLIGHT);
    await sender.close();
    return { reportsMs: answeredAt - startedAt, failed: sender.failed };
  });
  await settled(d.api.api!);
  if (before === undefined) return run;
  const after = await counters();
  const per = (key: keyof pg.WriteCounters) => (after[key] - before[key]) / run.notifications;
  return { ...run, writes: { commits: per('commits'), rows: per('rows'), walBytes: per('walBytes') } };
}
