// The notification section of `npm run bench`: from an agent's report that changes a tunnel's state to the
// signed HTTPS notification arriving at a local receiver, its latency at a steady rate and its throughput over
// a burst of changes, on SQLite and PostgreSQL, beside a bare undici loop to the same receiver (the floor) and
// Prometheus Alertmanager given the same changes as alerts, in the same run; then, on PostgreSQL, the burst
// again with the deliveries in 1, 2 and 4 worker processes.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { vacuumAnalyze } from '../jobs/postgres.js';
import type { Check } from '../lib/report.js';
import type { BenchCertificates } from '../lib/tls.js';
import { measureAlertmanager, measureFloor } from './anchors.js';
import type { NotifyCase } from './cases.js';
import {
  measureLatency,
  measureServiceThroughput,
  type LatencyResult,
  type ThroughputRun,
} from './measure.js';
import type { NotifyOptions } from './options.js';
import { sectionOutput } from './output.js';
import { startReceiver } from './receiver.js';
import {
  latencyChecks,
  medianRun,
  progress,
  runWarnings,
  throughputChecks,
  type ThroughputRow,
} from './report.js';
import { alertmanagerAnchor, runnableCases, startServices } from './setup.js';
import { workersSummary } from './workers-report.js';
import { measureWorkers, type WorkersRounds } from './workers.js';

export interface NotifySettings extends NotifyOptions {
  postgresUrl: string;
  /** Node options of the service and of the floor's process (the service's, as `npm start` runs it). */
  nodeOptions: string[];
  workDir: string;
  certificates: BenchCertificates;
}

export interface NotifySectionResult {
  output: string[];
  checks: Check[];
  warnings: string[];
}

const FLOOR = 'notify floor: undici POST loop';
const ALERTMANAGER = 'notify anchor: Alertmanager';

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

export async function runNotifySection(
  cases: NotifyCase[],
  settings: NotifySettings,
): Promise<NotifySectionResult> {
  const checks: Check[] = [];
  const warnings: string[] = [];
  const loadBefore = os.loadavg()[0] ?? 0;
  const logDir = path.join(settings.workDir, 'notify');
  fs.mkdirSync(logDir, { recursive: true });

  const runnable = await runnableCases(cases, settings.postgresUrl);
  checks.push(...runnable.skipped);
  const latencyCases = runnable.cases.filter((c) => c.measure === 'latency');
  const throughputCases = runnable.cases.filter((c) => c.measure === 'throughput');
  const workersCases = runnable.cases.filter((c) => c.measure === 'workers');
  const anchor = throughputCases.length > 0 ? alertmanagerAnchor(settings.alertmanagerBatch) : undefined;

  // Nodes 0 … changes-1 change once a throughput round; the ones after them once in the latency runs.
  const latencyWarmup = settings.ratePerSecond * settings.latencyWarmupSeconds;
  const latencyCount = latencyWarmup + settings.ratePerSecond * settings.latencySeconds;
  const seededNodes = settings.changes + latencyCount;
  const throughputNodes = range(0, settings.changes);
  const latencyNodes = range(settings.changes, latencyCount);
  const secret = randomBytes(24).toString('base64url');
  const receiver = await startReceiver(settings.certificates, secret);
  const latencies: LatencyResult[] = [];
  const rounds = new Map<string, ThroughputRun[]>();
  const keep = (run: ThroughputRun) => rounds.set(run.name, [...(rounds.get(run.name) ?? []), run]);
  let seedTimes: string[] | undefined;
  let workers: WorkersRounds[];
  try {
    const services = await startServices(
      [...latencyCases, ...throughputCases],
      seededNodes,
      receiver,
      secret,
      settings,
      logDir,
    );
    seedTimes = services.seedTimes;
    try {
      for (const c of latencyCases) {
        const target = services.running.get(c.database);
        if (target === undefined) continue;
        progress(
          `${c.name}: ${settings.ratePerSecond} changes/s, ${settings.latencyWarmupSeconds} s untimed then ${settings.latencySeconds} s`,
        );
        const result = await measureLatency(c.name, target.service, receiver, {
          nodes: latencyNodes,
          warmup: latencyWarmup,
          ratePerSecond: settings.ratePerSecond,
        });
        latencies.push(result);
        checks.push(...latencyChecks(result));
        if (result.missing > 0 || result.failedReports > 0)
          warnings.push(
            `warning: ${c.name}: ${result.missing} timed changes without a notification, ${result.failedReports} reports failed`,
          );
      }

      // Rounds take turns, as the job section's do, so a neighbour's burst of work falls on several measurements.
      const throughputRounds = throughputCases.length > 0 ? settings.rounds : 0;
      for (let round = 1; round <= throughputRounds; round += 1) {
        for (const c of throughputCases) {
          const target = services.running.get(c.database);
          if (target === undefined) continue;
          if (target.postgres !== undefined) await vacuumAnalyze(target.postgres.url);
          progress(`round ${round}/${settings.rounds}: ${c.name}`);
          keep(
            await measureServiceThroughput(c.name, target.service, receiver, {
              nodes: throughputNodes,
              round,
              postgres: target.postgres,
            }),
          );
        }
        progress(`round ${round}/${settings.rounds}: ${FLOOR}`);
        keep(
          await measureFloor(FLOOR, receiver, round, {
            count: settings.changes,
            concurrency: settings.concurrency,
            secret,
            caFile: settings.certificates.caFile,
            nodeOptions: settings.nodeOptions,
            logDir,
          }),
        );
        if (anchor?.binary !== undefined) {
          progress(`round ${round}/${settings.rounds}: ${ALERTMANAGER}`);
          keep(
            await measureAlertmanager(ALERTMANAGER, anchor.binary, receiver, round, {
              count: settings.changes,
              batch: settings.alertmanagerBatch,
              caFile: settings.certificates.caFile,
              logDir,
            }),
          );
        }
      }
    } finally {
      await services.close();
    }
    // After the other measurements' processes have stopped, so that these share the machine with none.
    workers = await measureWorkers(workersCases, {
      receiver,
      secret,
      settings,
      logDir,
      nodes: seededNodes,
      changing: throughputNodes,
    });
  } finally {
    await receiver.close();
  }
  if (receiver.strays() > 0)
    warnings.push(`warning: notify: ${receiver.strays()} notifications arrived outside any measurement`);

  const median = (name: string) => {
    const runs = rounds.get(name);
    return runs === undefined ? undefined : medianRun(runs);
  };
  const floor = median(FLOOR);
  const alertmanager = median(ALERTMANAGER);
  const rows: ThroughputRow[] = [];
  for (const c of throughputCases) {
    const run = median(c.name);
    if (run === undefined) continue;
    const row: ThroughputRow = {
      ...run,
      floorRatio: floor === undefined ? undefined : run.perSecond / floor.perSecond,
      alertmanagerRatio: alertmanager === undefined ? undefined : run.perSecond / alertmanager.perSecond,
    };
    rows.push(row);
    const versus =
      anchor?.binary === undefined ? 'not measured: Alertmanager is not installed' : alertmanager;
    checks.push(...throughputChecks(row, floor, versus));
  }
  if (floor !== undefined) rows.push(floor);
  if (alertmanager !== undefined) rows.push(alertmanager);
  for (const runs of [...rounds.values(), ...workers.map((w) => [w.warmUp, ...w.rounds])])
    for (const run of runs) warnings.push(...runWarnings(run, settings.changes));
  const scaling = workersSummary(workers, { settings, nodes: seededNodes });
  checks.push(...scaling.checks);

  const output = sectionOutput(
    {
      settings,
      nodes: seededNodes,
      seedTimes: seedTimes ?? [],
      postgresLine: runnable.postgresLine,
      alertmanagerLine: anchor?.line,
      loadBefore,
      floorBodyBytes: receiver.sampleBody()?.length,
    },
    latencies,
    rows,
  );
  return { output: [...output, ...scaling.output], checks, warnings };
}
