// The fleet section: agents' reports at a fixed rate, 1 % of them carrying a change, against the service on
// SQLite (one process) and on PostgreSQL (two API processes and a worker), on a fleet seeded straight into a
// fresh database holding exactly what the agents report.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compareDir, num, type Common } from '../lib/options.js';
import * as pg from '../lib/postgres.js';
import { cpuTimeMs } from '../lib/processes.js';
import { ReportSender, sendBurst, sendPaced } from '../lib/reports.js';
import * as r from '../lib/report.js';
import { otherBuild, startService, stopAll, THIS_BUILD, type Build, type Service } from '../lib/service.js';
import { seedDatabase } from '../notify/seed.js';
import { SimulatedFleet } from './agents.js';

const settings = (common: Common) => ({
  ...common,
  nodes: num('fleet-nodes'),
  ratePerSecond: num('fleet-rate'),
  durationSeconds: num('fleet-duration'),
  warmupSeconds: num('fleet-warmup', 0),
  changePercent: num('fleet-change', 0.5),
  /** Kept-alive connections per API process. */
  connections: num('fleet-connections'),
});
type FleetSettings = ReturnType<typeof settings>;

/** PASS/MISS against the targets on SQLite; PostgreSQL's row shows its ratios to them. */
type FleetCase = r.Case & { database: 'sqlite' | 'postgres'; goals: boolean };

export const FLEET_CASES: FleetCase[] = [
  { name: 'fleet reports: SQLite, one process', database: 'sqlite', goals: true },
  { name: 'fleet reports: PostgreSQL, 2 API processes + 1 worker', database: 'postgres', goals: false },
];

const TARGET = { p99Ms: 10, cores: 0.5, achievedRatio: 0.99 };
/**
 * The first pass takes about as long as the default timeout (90 s) on PostgreSQL here, so a node that
 * reported early in it could be judged UNREACHABLE before its next turn, making that report a change.
 */
const HEARTBEAT_TIMEOUT_S = '600';
const PRIME_IN_FLIGHT = 16;
/** More reports than this waiting for an answer: the service has fallen too far behind to keep sending. */
const MAX_WAITING = 20_000;

/** One case against one build: its row (the name first), and the figures the comparison sets side by side. */
type Measured = { row: string[]; figures: Record<string, number> };
type On = { build: Build; db: pg.BenchDatabase | undefined };

async function measure(c: FleetCase, s: FleetSettings, out: r.SectionResult, { build, db }: On) {
  const fleet = new SimulatedFleet(s.nodes, Date.now(), (s.nodes * 1000) / s.ratePerSecond);
  if (build !== THIS_BUILD) c = { ...c, name: `${c.name} (${build.label})`, goals: false };
  const file = `edgewatch-${build === THIS_BUILD ? 'this' : 'other'}.db`;
  const url = db?.url ?? `sqlite:${path.join(s.workDir, 'fleet', file)}`;
  r.progress(`seeding ${r.whole(s.nodes)} nodes into ${db?.name ?? 'SQLite'} (${build.label})`);
  const seeded = await seedDatabase(url, s.nodes, fleet.seed, build);
  const env = { ...seeded.env, NODE_HEARTBEAT_TIMEOUT_S: HEARTBEAT_TIMEOUT_S };
  const services: Service[] = [];
  const roles = c.database === 'sqlite' ? [undefined] : (['worker', 'api', 'api'] as const);
  let sender: ReportSender | undefined;
  try {
    for (const [n, role] of roles.entries()) {
      const logFile = path.join(s.workDir, 'fleet', `${c.database}-${n}-${role ?? 'serve'}-${file}.log`);
      services.push(await startService({ role, build, nodeOptions: s.nodeOptions, logFile, env }));
    }
    const apis = services.flatMap((service) => (service.baseUrl === undefined ? [] : [service.baseUrl]));
    sender = new ReportSender(apis, fleet.token, s.connections);
    r.progress(`${c.name}: every node reports once (${r.whole(fleet.size)} reports, closed loop)`);
    const report = (k: number) => ({ node: fleet.nodeAt(k), body: fleet.body(fleet.nodeAt(k)) });
    await sendBurst(sender, fleet.size, report, PRIME_IN_FLIGHT * apis.length);
    if (sender.failed > 0)
      throw new Error(`${c.name}: ${sender.failed} first reports failed: ${sender.firstFailure}`);
    const api = services.find((service) => service.api)!.api!;
    const eventsBefore = await api.count('/api/v2/event');
    r.progress(
      `${c.name}: ${s.ratePerSecond}/s, ${s.warmupSeconds} s untimed then ${s.durationSeconds} s timed`,
    );

    // Report k is due at start + k / rate; the window is the timed reports' span, CPU read at its edges.
    const warmup = s.warmupSeconds * s.ratePerSecond;
    const total = warmup + s.durationSeconds * s.ratePerSecond;
    const start = performance.now() + 50;
    const due = (k: number) => start + (k * 1000) / s.ratePerSecond;
    const read = async () => ({
      service: cpuTimeMs(...services.map((service) => service.pid)) ?? NaN,
      postgres: db && (await pg.databaseCpuMs(db.url, db.name)),
      runner: process.cpuUsage(),
    });
    type Reading = Awaited<ReturnType<typeof read>>;
    const edges = [due(warmup), due(total)].map(
      (at) => new Promise<Reading>((resolve) => setTimeout(() => resolve(read()), at - performance.now())),
    );
    const changeEvery = Math.max(1, Math.round(100 / s.changePercent));
    let changes = 0;
    const plan = (k: number) => {
      if (k % changeEvery === changeEvery - 1) {
        fleet.flip(fleet.nodeAt(k));
        changes += 1;
      }
      return report(k);
    };
    const paced = await sendPaced(sender, total, plan, s.ratePerSecond, { start, maxWaiting: MAX_WAITING });
    const [t0, t1] = (await Promise.all(edges)) as [Reading, Reading];
    const windowMs = due(total) - due(warmup);
    const latencies: number[] = [];
    let [answered, failed] = [0, 0];
    paced.answeredAt.forEach((at, k) => {
      if (at >= due(warmup) && at <= due(total)) answered += 1;
      if (k < warmup) return;
      if (Number.isNaN(at)) failed += 1;
      else latencies.push(at - paced.sentAt[k]!);
    });
    const service = (t1.service - t0.service) / windowMs;
    const postgres = db && (pg.cpuBetween(t0.postgres, t1.postgres) ?? NaN) / windowMs;
    const server = service + (postgres ?? 0);
    const runner = (t1.runner.user - t0.runner.user + t1.runner.system - t0.runner.system) / 1000 / windowMs;
    const events = (await api.count('/api/v2/event')) - eventsBefore;
    const alive = await api.count('/api/v2/node?node_state=ALIVE');
    if (alive !== fleet.size)
      out.warnings.push(`${c.name}: ${alive} of ${fleet.size} nodes ALIVE after the load`);
    if (events !== changes) out.warnings.push(`${c.name}: ${events} events stored for ${changes} changes`);
    if (failed > 0) out.warnings.push(`${c.name}: ${failed} reports failed: ${sender.firstFailure}`);
    const achievedPerSecond = (answered * 1000) / windowMs;
    const achieved = achievedPerSecond / s.ratePerSecond;
    const [p50, p99] = [50, 99].map((p) => r.percentile(latencies, p)) as [number, number];
    if (c.goals)
      out.checks.push(
        {
          subject: c.name,
          goal: `${r.whole(s.ratePerSecond)} reports/s sustained (achieved ≥ ${TARGET.achievedRatio} × offered, none failed)`,
          actual: `${r.whole(achievedPerSecond)} reports/s, ${achieved.toFixed(3)} × offered, ${failed} failed`,
          met: achieved >= TARGET.achievedRatio && failed === 0,
        },
        r.goal(c.name, 'p99', p99, TARGET.p99Ms, 'ms'),
        r.goal(c.name, 'server CPU', server, TARGET.cores, 'cores'),
      );
    const pgShare =
      postgres === undefined ? '' : ` (${r.fixed(service, 2)} + ${r.fixed(postgres, 2)} PostgreSQL)`;
    const row = [
      c.name,
      `${r.whole(achievedPerSecond)} (${achieved.toFixed(3)})`,
      p50.toFixed(2),
      p99.toFixed(2),
      (p99 / TARGET.p99Ms).toFixed(2),
      r.fixed(r.percentile(latencies, 100), 1),
      r.whole(failed),
      r.fixed(server, 2) + pgShare,
      r.fixed(runner, 2),
      `${r.whole(events)} ÷ ${r.whole(changes)}`,
    ];
    const figures = {
      'reports/s': achievedPerSecond,
      'p50 (ms)': p50,
      'p99 (ms)': p99,
      'server CPU': server,
    };
    return { row, figures } satisfies Measured;
  } finally {
    await sender?.close();
    await stopAll(services);
  }
}

export async function runFleetSection(cases: FleetCase[], common: Common): Promise<r.SectionResult> {
  const s = settings(common);
  const out = r.emptyResult();
  fs.mkdirSync(path.join(s.workDir, 'fleet'), { recursive: true });
  const loadBefore = os.loadavg()[0] ?? 0;
  const other = compareDir === undefined ? undefined : otherBuild(compareDir);
  const builds = [THIS_BUILD, ...(other ? [other] : [])];
  const measured: Measured[][] = [];
  for (const c of await pg.runnable(cases, s.postgresUrl, out, 'a fresh database, analysed after the seed')) {
    const ofCase: Measured[] = [];
    for (const build of builds) {
      const db = c.database === 'postgres' ? await pg.createBenchDatabase(s.postgresUrl) : undefined;
      ofCase.push(await measure(c, s, out, { build, db }).finally(() => db?.drop()));
    }
    measured.push(ofCase);
  }
  const rows = measured.flat().map((m) => m.row);
  out.output.unshift(
    `Fleet: ${r.whole(s.nodes)} nodes with 2 tunnels and 3 services each, seeded ALIVE; reports at ` +
      `${r.whole(s.ratePerSecond)}/s open loop, ${s.changePercent} % with a change, ${s.warmupSeconds} s untimed then ` +
      `${s.durationSeconds} s timed, ${s.connections} connections per API process; NODE_HEARTBEAT_TIMEOUT_S=` +
      `${HEARTBEAT_TIMEOUT_S}; load average (1 min) at the start ${loadBefore.toFixed(2)}`,
  );
  const head =
    `measurement | achieved (reports/s) | p50 (ms) | p99 (ms) | p99 ÷ ${TARGET.p99Ms} ms | max (ms) | failed | ` +
    'server CPU (cores) | sender CPU (cores) | events ÷ changes';
  if (rows.length > 0) out.output.push('', r.table(head, rows));
  if (other !== undefined) {
    const line = `Compared with ${other.label} (${other.root}): its own build and seed, after this build's`;
    out.output.splice(1, 0, line);
    const compare = ([ours, theirs]: Measured[]) =>
      Object.keys(ours!.figures).flatMap((figure) =>
        r.compared(`${ours!.row[0]}: ${figure}`, ours!.figures[figure], theirs!.figures[figure]),
      );
    r.addComparison(out, other.label, measured.flatMap(compare));
  }
  return out;
}
