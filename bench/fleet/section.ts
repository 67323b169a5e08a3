// The fleet section of `npm run bench`: agents' reports at a fixed rate against the service on SQLite (one
// process) and on PostgreSQL (API processes and a worker), and the liveness sweep's time over the same fleet.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { redactUrl } from '../../src/observability/logger.js';
import { probePostgres } from '../jobs/postgres.js';
import type { Check } from '../lib/report.js';
import { SERVICES_PER_NODE, SimulatedFleet, TUNNELS_PER_NODE } from './agents.js';
import type { FleetCase } from './cases.js';
import { HEARTBEAT_TIMEOUT_S, openFleetDatabase } from './database.js';
import { measureReports } from './measure.js';
import {
  cpuTable,
  progress,
  reportsChecks,
  reportsTable,
  sweepChecks,
  sweepTable,
  whole,
  type ReportsResult,
  type SweepCaseResult,
} from './report.js';
import { timeSweeps } from './sweep.js';

export interface FleetSettings {
  nodes: number;
  ratePerSecond: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Percentage of reports that carry a change. */
  changePercent: number;
  /** Kept-alive connections per API process. */
  connections: number;
  /** Reports in flight per API process while every node reports once before the load. */
  primeConcurrency: number;
  sweepRuns: number;
  /** Percentage of the ALIVE nodes each timed sweep finds silent. */
  silentPercent: number;
  postgresUrl: string;
  nodeOptions: string[];
  workDir: string;
}

export interface FleetSectionResult {
  output: string[];
  checks: Check[];
  warnings: string[];
}

export async function runFleetSection(
  cases: FleetCase[],
  settings: FleetSettings,
): Promise<FleetSectionResult> {
  const checks: Check[] = [];
  const warnings: string[] = [];
  const output: string[] = [];
  const loadBefore = os.loadavg()[0] ?? 0;
  const logDir = path.join(settings.workDir, 'fleet');
  fs.mkdirSync(logDir, { recursive: true });

  let runnable = cases;
  const shownUrl = redactUrl(settings.postgresUrl);
  let postgresLine: string | undefined;
  if (cases.some((c) => c.database === 'postgres')) {
    const server = await probePostgres(settings.postgresUrl);
    if ('error' in server) {
      postgresLine = `PostgreSQL at ${shownUrl} did not answer (${server.error}): its fleet figures are skipped.`;
      process.stderr.write(
        `PostgreSQL did not answer (${server.error}): skipping the PostgreSQL fleet figures\n`,
      );
      runnable = cases.filter((c) => c.database !== 'postgres');
      for (const c of cases.filter((entry) => entry.database === 'postgres')) {
        checks.push({
          subject: c.name,
          goal: '',
          actual: 'not measured: PostgreSQL did not answer',
          met: false,
          skipped: true,
        });
      }
    } else {
      const s = server.settings;
      postgresLine =
        `PostgreSQL ${server.version} at ${shownUrl} (autovacuum ${s.autovacuum}, synchronous_commit ` +
        `${s.synchronous_commit}, fsync ${s.fsync}); a fresh database for the run, analysed after the seed, dropped afterwards`;
    }
  }

  const reports: ReportsResult[] = [];
  const sweeps: SweepCaseResult[] = [];
  for (const database of ['sqlite', 'postgres'] as const) {
    const here = runnable.filter((c) => c.database === database);
    if (here.length === 0) continue;
    const fleet = new SimulatedFleet(settings.nodes, Date.now());
    const open = await openFleetDatabase(database, fleet, { ...settings, logDir });
    try {
      for (const c of here) {
        if (c.measure === 'reports') {
          const result = await measureReports(c, settings, fleet, open, logDir, warnings);
          reports.push(result);
          checks.push(...reportsChecks(c, result));
        } else {
          progress(
            `${c.name}: ${settings.sweepRuns} sweeps with no silent node, ${settings.sweepRuns} with ${settings.silentPercent} % silent`,
          );
          const result = {
            name: c.name,
            ...(await timeSweeps(open.ctx, settings.sweepRuns, settings.silentPercent)),
          };
          sweeps.push(result);
          checks.push(...sweepChecks(c, result));
        }
      }
    } finally {
      await open.drop();
    }
  }

  output.push(
    `Fleet: ${whole(settings.nodes)} nodes, each with ${TUNNELS_PER_NODE} tunnels and ${SERVICES_PER_NODE} services, ` +
      'ALIVE and seeded straight into a fresh database' +
      (reports.length > 0 ? '; every node reports its whole state once before the load' : ''),
  );
  if (postgresLine !== undefined) output.push(postgresLine);
  output.push(
    `Machine load average (1 min) when the section started: ${loadBefore.toFixed(2)}` +
      (reports.length > 0
        ? '; what else ran during each timed window is the "anything else on the machine" row below'
        : ''),
  );
  if (reports.length > 0) {
    output.push(
      `\nReports: POST /api/v1/agent/report at ${whole(settings.ratePerSecond)}/s open loop (sent at fixed times ` +
        `whatever the answers; latency from send to answer), ${settings.changePercent} % with one tunnel or service changed, ` +
        `${settings.warmupSeconds} s untimed then ${settings.durationSeconds} s timed; ${settings.connections} ` +
        'kept-alive connections per API process, reports taking the API processes in turn; ' +
        `NODE_HEARTBEAT_TIMEOUT_S=${HEARTBEAT_TIMEOUT_S}, so that no node is UNREACHABLE before its turn\n`,
    );
    output.push(reportsTable(reports));
    output.push('\nWhere the CPU went over the timed window:\n');
    output.push(cpuTable(reports));
    output.push('');
    for (const r of reports) {
      output.push(
        `${r.name}: seed ${(r.seedMs / 1000).toFixed(1)} s; first report of every node ` +
          `${whole(r.primeReportsPerSecond)} reports/s (closed loop, ${settings.primeConcurrency} in flight per API process); ` +
          `sender late by ${r.sendLagP99Ms.toFixed(2)} ms at p99`,
      );
    }
  }
  if (sweeps.length > 0) {
    output.push(
      `\nLiveness sweep (sweepSilentNodes, alone on the database, after the load if any): median of ${settings.sweepRuns} runs; ` +
        `for the runs with silent nodes, their last report is first set a minute beyond the timeout ` +
        `(NODE_HEARTBEAT_TIMEOUT_S=${HEARTBEAT_TIMEOUT_S})\n`,
    );
    output.push(sweepTable(sweeps));
  }
  return { output, checks, warnings };
}
