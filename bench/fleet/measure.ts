// One reports measurement: the service's processes on a seeded database, every node's first report, then the
// steady stream with the CPU of every process read at the edges of the timed window.
import { cpuBetween, databaseCpuMs } from '../jobs/postgres.js';
import { cpuTimeMs, residentMB } from '../lib/processes.js';
import type { SimulatedFleet } from './agents.js';
import type { FleetCase } from './cases.js';
import { aliveNodes, countEvents, HEARTBEAT_TIMEOUT_S, type OpenDatabase } from './database.js';
import { primeFleet, reportClient, runPaced } from './load.js';
import { busyCores, machineCpu, type MachineCpu } from './machine.js';
import { progress, sortedPercentile, whole, type ProcessCpu, type ReportsResult } from './report.js';
import type { FleetSettings } from './section.js';
import { startFleetServers, type FleetServers } from './servers.js';

interface CpuReading {
  processes: Map<number, number | undefined>;
  postgres: Promise<Map<number, number> | undefined> | undefined;
  machine: MachineCpu | undefined;
}

function readCpu(servers: FleetServers, postgres: { url: string; name: string } | undefined): CpuReading {
  return {
    processes: new Map(servers.processes.map((p) => [p.pid, cpuTimeMs(p.pid)])),
    postgres: postgres === undefined ? undefined : databaseCpuMs(postgres.url, postgres.name),
    machine: machineCpu(),
  };
}

/**
 * Starts the service on the seeded database, has every node report once, then sends the steady stream and
 * reads every process's CPU at the window's edges. Problems that spoil the figures become warnings.
 */
export async function measureReports(
  c: FleetCase,
  settings: FleetSettings,
  fleet: SimulatedFleet,
  open: OpenDatabase,
  logDir: string,
  warnings: string[],
): Promise<ReportsResult> {
  const servers = await startFleetServers({
    database: c.database,
    databaseUrl: open.url,
    secretKey: open.secretKey,
    apiProcesses: c.apiProcesses,
    nodeOptions: settings.nodeOptions,
    logDir,
    env: { NODE_HEARTBEAT_TIMEOUT_S: String(HEARTBEAT_TIMEOUT_S) },
  });
  const client = reportClient(servers.baseUrls, fleet, settings.connections);
  try {
    progress(`${c.name}: every node reports once (${whole(fleet.size)} reports, closed loop)`);
    const prime = await primeFleet(client, fleet, settings.primeConcurrency * servers.baseUrls.length);
    if (prime.failed > 0) throw new Error(`${c.name}: ${prime.failed} of the first reports failed`);
    const eventsBefore = await countEvents(open.ctx);
    progress(
      `${c.name}: ${whole(settings.ratePerSecond)} reports/s, ${settings.warmupSeconds} s untimed then ` +
        `${settings.durationSeconds} s timed`,
    );
    const readings: Partial<Record<'start' | 'end', CpuReading>> = {};
    const paced = await runPaced(client, fleet, {
      ratePerSecond: settings.ratePerSecond,
      warmupSeconds: settings.warmupSeconds,
      durationSeconds: settings.durationSeconds,
      changeEvery: Math.max(1, Math.round(100 / settings.changePercent)),
      onWindow: (edge) => {
        readings[edge] = readCpu(servers, open.postgres);
      },
    });
    const rss = new Map(servers.processes.map((p) => [p.pid, residentMB(p.pid)]));
    await client.close();
    await servers.stop();
    const { start, end } = readings;
    if (start === undefined || end === undefined) throw new Error('no CPU readings over the window');
    const processes: ProcessCpu[] = servers.processes.map((p) => {
      const [before, after] = [start.processes.get(p.pid), end.processes.get(p.pid)];
      return {
        label: p.label,
        cpuMs: before === undefined || after === undefined ? undefined : after - before,
        rssMB: rss.get(p.pid),
      };
    });
    if (start.postgres !== undefined && end.postgres !== undefined) {
      const [before, after] = await Promise.all([start.postgres, end.postgres]);
      processes.push({ label: 'PostgreSQL backends of the run database', cpuMs: cpuBetween(before, after) });
    }
    const events = (await countEvents(open.ctx)) - eventsBefore;
    const alive = await aliveNodes(open.ctx);
    if (alive !== fleet.size)
      warnings.push(`warning: ${c.name}: ${alive} of ${fleet.size} nodes ALIVE after the load`);
    if (events !== paced.changes) {
      warnings.push(
        `warning: ${c.name}: ${events} events stored for ${paced.changes} reports with a change ` +
          '(one each expected: a report without a change made one, or a change made none)',
      );
    }
    if (paced.failed + paced.skipped > 0) {
      warnings.push(
        `warning: ${c.name}: ${paced.failed} reports failed and ${paced.skipped} were not sent; answers: ` +
          JSON.stringify(paced.statuses),
      );
    }
    const latencies = paced.latenciesMs.sort();
    const lags = paced.sendLagsMs.sort();
    return {
      name: c.name,
      nodes: fleet.size,
      offeredPerSecond: paced.offeredPerSecond,
      achievedPerSecond: paced.achievedPerSecond,
      answered: paced.answered,
      answeredInWindow: paced.answeredInWindow,
      failed: paced.failed,
      skipped: paced.skipped,
      p50Ms: sortedPercentile(latencies, 50),
      p99Ms: sortedPercentile(latencies, 99),
      maxMs: latencies[latencies.length - 1] ?? Number.NaN,
      sendLagP99Ms: sortedPercentile(lags, 99),
      windowMs: paced.windowMs,
      processes,
      sender: { label: 'load sender (the bench process)', cpuMs: paced.senderCpuMs },
      machineCores: busyCores(start.machine, end.machine),
      changes: paced.changes,
      events,
      primeReportsPerSecond: (prime.reports * 1000) / prime.ms,
      seedMs: open.seed.ms,
    };
  } finally {
    await client.close();
    await servers.stop();
  }
}
