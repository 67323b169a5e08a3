// The fleet section: agents' reports at a fixed rate, 1 % with a change, against SQLite (one process) and
// PostgreSQL (two API processes and a worker), on a fresh database seeded with what the agents report.
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { compareDir, num, type Common } from '../lib/options.js';
import * as pg from '../lib/postgres.js';
import { cpuTimeMs } from '../lib/processes.js';
import { ReportSender, sendBurst, sendPaced } from '../lib/reports.js';
import * as r from '../lib/report.js';
import { otherBuild, startService, stopAll, THIS_BUILD, type Build, type Service } from '../lib/service.js';
import { seedDatabase } from '../notify/seed.js';
import { simulatedFleet } from './agents.js';

const settings = (common: Common) => ({
  ...common,
  nodes: num('fleet-nodes'),
  rate: num('fleet-rate'),
  durationS: num('fleet-duration'),
  warmupS: num('fleet-warmup', 0),
  changePercent: num('fleet-change', 0.5),
  connectionsPerApi: num('fleet-connections'),
});

/** PASS/MISS against the targets on SQLite; PostgreSQL's row shows its ratios to them. */
type FleetCase = r.Case & { database: 'sqlite' | 'postgres'; goals: boolean };
export const FLEET_CASES: FleetCase[] = [
  { name: 'fleet reports: SQLite, one process', database: 'sqlite', goals: true },
  { name: 'fleet reports: PostgreSQL, 2 API processes + 1 worker', database: 'postgres', goals: false },
];

const TARGET = { p99Ms: 10, cores: 0.5, achievedRatio: 0.99 };
// Well above the first pass on PostgreSQL (about the default 90 s): no node goes UNREACHABLE before its turn.
const HEARTBEAT_TIMEOUT_S = '600';
/** One case against one build: its table row by column, and the figures --compare sets side by side. */
type Measured = { columns: Record<string, string>; figures: Record<string, number> };

async function measure(c: FleetCase, s: ReturnType<typeof settings>, out: r.SectionResult, build: Build) {
  const db = c.database === 'postgres' ? await pg.createBenchDatabase(s.postgresUrl) : undefined;
  const fleet = simulatedFleet(s.nodes, Date.now(), (s.nodes * 1000) / s.rate);
  if (build !== THIS_BUILD) c = { ...c, name: `${c.name} (${build.label})`, goals: false };
  const file = path.join(s.workDir, `fleet-${build === THIS_BUILD ? 'this' : 'other'}`);
  const services: Service[] = [];
  let sender: ReportSender | undefined;
  try {
    r.progress(`seeding ${r.whole(s.nodes)} nodes into ${db?.name ?? 'SQLite'} (${build.label})`);
    const url = db?.url ?? `sqlite:${file}.db`;
    const seeded = await seedDatabase(url, s.nodes, fleet.seed, build);
    const env = { ...seeded.env, NODE_HEARTBEAT_TIMEOUT_S: HEARTBEAT_TIMEOUT_S };
    const roles = c.database === 'sqlite' ? [undefined] : (['worker', 'api', 'api'] as const);
    for (const [n, role] of roles.entries()) {
      const logFile = `${file}-${c.database}-${n}-${role ?? 'serve'}.log`;
      services.push(await startService({ role, build, nodeOptions: s.nodeOptions, logFile, env }));
    }
    const apis = services.flatMap((service) => service.baseUrl ?? []);
    sender = new ReportSender(apis, fleet.token, s.connectionsPerApi);
    r.progress(`${c.name}: every node reports once (${r.whole(s.nodes)} reports, closed loop)`);
    const report = (k: number) => ({ node: fleet.nodeAt(k), body: fleet.body(fleet.nodeAt(k)) });
    await sendBurst(sender, s.nodes, report, 16 * apis.length);
    if (sender.failed > 0)
      throw new Error(`${c.name}: ${sender.failed} first reports failed: ${sender.firstFailure}`);
    const api = services.find((service) => service.api)!.api!;
    const eventsBefore = await api.count('/api/v2/event');
    r.progress(`${c.name}: ${s.rate}/s, ${s.warmupS} s untimed then ${s.durationS} s timed`);
    // Report k is due at start + k / rate; the window is the timed reports' span, CPU read at its edges.
    const [warmup, total] = [s.warmupS * s.rate, (s.warmupS + s.durationS) * s.rate];
    const start = performance.now() + 50;
    const due = (k: number) => start + (k * 1000) / s.rate;
    const read = async () => ({
      service: cpuTimeMs(...services.map((service) => service.pid)) ?? NaN,
      postgres: db && (await pg.databaseCpuMs(db.url, db.name)),
      runner: process.cpuUsage(),
    });
    const readAt = (ms: number) => sleep(ms - performance.now()).then(read);
    const edges = Promise.all([readAt(due(warmup)), readAt(due(total))]);
    const changeEvery = Math.max(1, Math.round(100 / s.changePercent));
    const plan = (k: number) => {
      if (k % changeEvery === changeEvery - 1) fleet.flip(fleet.nodeAt(k));
      return report(k);
    };
    // More than 20,000 unanswered: the service has fallen too far behind to keep sending.
    const paced = await sendPaced(sender, total, plan, s.rate, { start, maxWaiting: 20_000 });
    const [t0, t1] = await edges;
    const windowMs = due(total) - due(warmup);
    const answered = paced.answeredAt.filter((at) => at >= due(warmup) && at <= due(total)).length;
    // The timed reports' latencies; NaN for those not answered 2xx, or not sent.
    const timed = Array.from(paced.answeredAt.subarray(warmup), (at, i) => at - paced.sentAt[warmup + i]!);
    const latencies = timed.filter((ms) => !Number.isNaN(ms));
    const failed = timed.length - latencies.length;
    const service = (t1.service - t0.service) / windowMs;
    const postgres = db && (pg.cpuBetween(t0.postgres, t1.postgres) ?? NaN) / windowMs;
    const server = service + (postgres ?? 0);
    const runner = (t1.runner.user - t0.runner.user + t1.runner.system - t0.runner.system) / 1000 / windowMs;
    const [events, changes] = [(await api.count('/api/v2/event')) - eventsBefore, fleet.changes];
    const alive = await api.count('/api/v2/node?node_state=ALIVE');
    if (alive !== s.nodes) out.warnings.push(`${c.name}: ${alive} of ${s.nodes} nodes ALIVE after the load`);
    if (events !== changes) out.warnings.push(`${c.name}: ${events} events stored for ${changes} changes`);
    if (failed > 0) out.warnings.push(`${c.name}: ${failed} reports failed: ${sender.firstFailure}`);
    const perSecond = (answered * 1000) / windowMs;
    const achieved = perSecond / s.rate;
    const [p50, p99] = [50, 99].map((p) => r.percentile(latencies, p)) as [number, number];
    if (c.goals)
      out.checks.push(
        {
          subject: c.name,
          goal: `${r.whole(s.rate)} reports/s sustained (achieved ≥ ${TARGET.achievedRatio} × offered, none failed)`,
          actual: `${r.whole(perSecond)} reports/s, ${achieved.toFixed(3)} × offered, ${failed} failed`,
          met: achieved >= TARGET.achievedRatio && failed === 0,
        },
        r.goal(c.name, 'p99', p99, TARGET.p99Ms, 'ms'),
        r.goal(c.name, 'server CPU', server, TARGET.cores, 'cores'),
      );
    const pgShare = db ? ` (${r.fixed(service, 2)} + ${r.fixed(postgres, 2)} PostgreSQL)` : '';
    const columns = {
      measurement: c.name,
      'achieved (reports/s)': `${r.whole(perSecond)} (${achieved.toFixed(3)})`,
      'p50 (ms)': p50.toFixed(2),
      'p99 (ms)': p99.toFixed(2),
      [`p99 ÷ ${TARGET.p99Ms} ms`]: (p99 / TARGET.p99Ms).toFixed(2),
      'max (ms)': r.fixed(r.percentile(latencies, 100), 1),
      failed: r.whole(failed),
      'server CPU (cores)': r.fixed(server, 2) + pgShare,
      'sender CPU (cores)': r.fixed(runner, 2),
      'events ÷ changes': `${r.whole(events)} ÷ ${r.whole(changes)}`,
    };
    const figures = { 'reports/s': perSecond, 'p50 (ms)': p50, 'p99 (ms)': p99, 'server CPU': server };
    return { columns, figures } satisfies Measured;
  } finally {
    await sender?.close();
    await stopAll(services);
    await db?.drop();
  }
}

export async function runFleetSection(cases: FleetCase[], common: Common): Promise<r.SectionResult> {
  const s = settings(common);
  const other = compareDir === undefined ? undefined : otherBuild(compareDir);
  const out = r.emptyResult(
    `Fleet: ${r.whole(s.nodes)} nodes with 2 tunnels and 3 services each, seeded ALIVE; reports at ` +
      `${r.whole(s.rate)}/s open loop, ${s.changePercent} % with a change, ${s.warmupS} s untimed then ` +
      `${s.durationS} s timed, ${s.connectionsPerApi} connections per API process; NODE_HEARTBEAT_TIMEOUT_S=` +
      `${HEARTBEAT_TIMEOUT_S}; load average (1 min) at the start ${(os.loadavg()[0] ?? 0).toFixed(2)}`,
    ...(other
      ? [`Compared with ${other.label} (${other.root}): its own build and seed, after this build's`]
      : []),
  );
  const measured: Measured[][] = [];
  for (const c of await pg.runnable(cases, s.postgresUrl, out, 'a fresh database, analysed after the seed')) {
    const ours = await measure(c, s, out, THIS_BUILD);
    measured.push([ours, ...(other ? [await measure(c, s, out, other)] : [])]);
  }
  const rows = measured.flat().map((m) => Object.values(m.columns));
  if (rows.length > 0) out.output.push('', r.table(Object.keys(measured[0]![0]!.columns).join(' | '), rows));
  const compare = ([ours, theirs]: Measured[]) =>
    Object.entries(ours!.figures).flatMap(([figure, x]) =>
      r.compared(`${ours!.columns.measurement}: ${figure}`, x, theirs?.figures[figure]),
    );
  r.addComparison(out, other?.label, measured.flatMap(compare));
  return out;
}
