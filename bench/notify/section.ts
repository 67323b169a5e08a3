// The notification section: from an agent's report that changes a tunnel's state to the signed notification
// at a local HTTPS receiver, its latency and its throughput on SQLite and PostgreSQL, beside the undici floor,
// Alertmanager and (--compare) another build; then the throughput with 1, 2 and 4 worker processes.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compareDir, type Common } from '../lib/options.js';
import * as pg from '../lib/postgres.js';
import { startOtlpSink } from '../lib/otlp-sink.js';
import { startReceiver } from '../lib/receiver.js';
import * as r from '../lib/report.js';
import { otherBuild, stopAll, THIS_BUILD, type Build, type Service } from '../lib/service.js';
import { ALERTMANAGER, findAlertmanager, FLOOR, measureAlertmanager, measureFloor } from './anchors.js';
import * as m from './measure.js';
import { notifySettings, startNotifyService, targetsOf, type NotifyCase } from './service.js';
import { measureWorkers } from './workers.js';

const LATENCY_WARMUP_SECONDS = 2;
const WRITES = { commits: 'commits', rows: 'rows written', walBytes: 'WAL bytes' } as const;
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
const ratio = (a: number, b?: number) => r.fixed(b === undefined ? undefined : a / b, 2);

export async function runNotifySection(cases: NotifyCase[], common: Common): Promise<r.SectionResult> {
  const settings = notifySettings(common);
  const { changes, ratePerSecond, latencySeconds, rounds: roundCount } = settings;
  const out = r.emptyResult();
  const logDir = path.join(settings.workDir, 'notify');
  fs.mkdirSync(logDir, { recursive: true });
  const loadBefore = os.loadavg()[0] ?? 0;
  const note = 'a fresh database per deployment, vacuumed before each throughput round';
  const runnable = await pg.runnable(cases, settings.postgresUrl, out, note);
  const of = (measure: NotifyCase['measure']) => runnable.filter((c) => c.measure === measure);
  const alertmanager = of('alertmanager').length > 0 ? findAlertmanager() : undefined;
  const described = `${alertmanager?.version}: a process per round, no grouping, ${settings.alertmanagerBatch} alerts a POST`;
  if (of('alertmanager').length > 0)
    out.output.push(alertmanager ? described : 'Alertmanager is not installed: its anchor is skipped');
  // This build again with tracing on, exporting every span to a local collector: what tracing costs.
  const otlp = await startOtlpSink();
  const traced = { ...THIS_BUILD, label: 'tracing on', env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } };
  const compare = compareDir === undefined ? undefined : otherBuild(compareDir);
  const others = [traced, ...(compare ? [compare] : [])];
  const builds = [THIS_BUILD, ...others];
  // This build's measurements keep their names (and goals); the other build's carry its label.
  const named = (c: NotifyCase, build: Build) =>
    build === THIS_BUILD ? c.name : `${c.name} (${build.label})`;
  const compared =
    'its own `dist/main.js serve`, database and seed; each measurement right after this build’s';
  if (compare !== undefined) out.output.push(`Compared with ${compare.label} (${compare.root}): ${compared}`);

  // Nodes 0 … changes-1 change once a throughput round; the ones after them once in the latency runs.
  const latencyWarmup = ratePerSecond * LATENCY_WARMUP_SECONDS;
  const latencyNodes = range(changes, latencyWarmup + ratePerSecond * latencySeconds);
  const secret = randomBytes(24).toString('base64url');
  const receiver = await startReceiver(settings.certificates, secret);
  const nodes = changes + latencyNodes.length;
  const context = { settings, receiver, secret, logDir, nodes, changing: range(0, changes) };
  const latencies = new Map<string, Awaited<ReturnType<typeof m.measureLatency>>>();
  const rounds = new r.Rounds<m.ThroughputRun>((run) => run.perSecond);
  let workers: r.SectionResult | undefined;
  try {
    const deployments = new Map<string, m.Deployment>();
    const services: Service[] = [];
    const databases: pg.BenchDatabase[] = [];
    try {
      for (const kind of ['sqlite', 'postgres'] as const)
        for (const [n, build] of builds.entries()) {
          if (!runnable.some((c) => c.database === kind && c.measure !== 'workers')) continue;
          const db = kind === 'postgres' ? await pg.createBenchDatabase(settings.postgresUrl) : undefined;
          databases.push(...(db ? [db] : []));
          const url = db?.url ?? `sqlite:${path.join(logDir, `edgewatch-${n}.db`)}`;
          const logFile = path.join(logDir, `${kind}-${n}.log`);
          const service = await startNotifyService(context, url, logFile, { build });
          services.push(service);
          const meters = [m.processMeter('service', [service]), ...(db ? [m.postgresMeter(db)] : [])];
          deployments.set(`${kind} ${build.label}`, { api: service, meters, postgres: db });
        }
      const deployment = (c: NotifyCase, build: Build) => deployments.get(`${c.database} ${build.label}`)!;
      for (const c of of('latency'))
        for (const build of builds) {
          const name = named(c, build);
          r.progress(`${name}: ${ratePerSecond}/s, ${LATENCY_WARMUP_SECONDS} s untimed, ${latencySeconds} s`);
          const plan = { nodes: latencyNodes, warmup: latencyWarmup, ratePerSecond };
          const measured = await m.measureLatency(name, deployment(c, build), receiver, plan);
          latencies.set(measured.name, measured);
          out.warnings.push(...(measured.warning ? [measured.warning] : []));
          if (build !== THIS_BUILD) continue;
          const label = (p: string) => `${p} from the report's send to the notification's arrival`;
          const goals = targetsOf(c.name);
          out.checks.push(r.goal(c.name, label('p50'), measured.p50, goals.p50Ms, 'ms'));
          out.checks.push(r.goal(c.name, label('p99'), measured.p99, goals.p99Ms, 'ms'));
        }
      const { caFile } = settings.certificates;
      const anchor = (name: string, round: number) => ({ name, round, count: changes, logDir, caFile });
      // Rounds take turns, so a neighbour's burst of work falls on several measurements rather than on one.
      for (let round = 1; of('throughput').length > 0 && round <= roundCount; round += 1) {
        for (const c of of('throughput'))
          for (const build of builds) {
            const [d, name] = [deployment(c, build), named(c, build)];
            if (d.postgres !== undefined) await pg.vacuumAnalyze(d.postgres.url);
            r.progress(`round ${round}/${roundCount}: ${name}`);
            const burst = { nodes: context.changing, round };
            rounds.add(name, await m.measureThroughput(name, d, receiver, burst));
          }
        if (of('floor').length > 0)
          rounds.add(FLOOR, await measureFloor(anchor(FLOOR, round), receiver, { secret, ...settings }));
        const batch = settings.alertmanagerBatch;
        if (alertmanager)
          rounds.add(
            ALERTMANAGER,
            await measureAlertmanager(anchor(ALERTMANAGER, round), alertmanager.path, receiver, batch),
          );
      }
    } finally {
      await stopAll(services);
      for (const db of databases) await db.drop();
    }
    // After the other measurements' processes have stopped, so that these share the machine with none.
    if (of('workers').length > 0) workers = await measureWorkers(of('workers'), context);
  } finally {
    await receiver.close();
    await otlp.close();
  }
  if (receiver.strays > 0)
    out.warnings.push(`notify: ${receiver.strays} notifications outside any measurement`);
  for (const runs of rounds.all.values())
    for (const run of runs) out.warnings.push(...m.runWarnings(run, changes));

  const [floor, am] = [rounds.median(FLOOR), rounds.median(ALERTMANAGER)];
  const throughput = [...rounds.all.keys()].map((name) => {
    const run = rounds.median(name)!;
    const ours = of('throughput').some((c) => c.name === name);
    const versus = (what: string, anchor: m.ThroughputRun | undefined, least: number) =>
      anchor
        ? [r.goal(name, `÷ ${what} (same run)`, run.perSecond / anchor.perSecond, least, '×', false)]
        : [];
    const goals = targetsOf(name);
    const cpuGoal = goals.cpuPerNotificationUs;
    if (ours)
      out.checks.push(
        r.goal(name, 'notifications', run.perSecond, goals.perSecond, '/s', false),
        ...versus("Alertmanager's rate", am, goals.alertmanagerRatio),
        ...(cpuGoal === undefined
          ? []
          : [r.goal(name, 'service CPU per notification', m.cpuPerNotification(run), cpuGoal, 'µs')]),
      );
    return [
      name,
      r.whole(run.perSecond),
      ours ? (run.perSecond / goals.perSecond).toFixed(2) : '',
      ours ? ratio(run.perSecond, floor?.perSecond) : '',
      ours ? ratio(run.perSecond, am?.perSecond) : '',
      run.reportsMs === undefined ? '' : r.whole(run.reportsMs),
      r.whole(run.elapsedMs),
      m.sendersCpu(run),
      r.whole((run.runnerCpuMs * 1000) / run.notifications),
      run.writes === undefined
        ? ''
        : `${run.writes.commits.toFixed(2)} / ${run.writes.rows.toFixed(2)} / ${r.whole(run.writes.walBytes)}`,
    ];
  });
  // Each figure of this build beside the other build's, and their ratio.
  const comparison = (other: Build) =>
    runnable.flatMap((c) => {
      const [ours, theirs] = [c.name, named(c, other)];
      const [lo, lt] = [ours, theirs].map((name) => latencies.get(name));
      const [to, tt] = [ours, theirs].map((name) => rounds.median(name));
      const cpu = (run?: m.ThroughputRun) => run && m.cpuPerNotification(run);
      return [
        ...r.compared(`${c.name}: p50 (ms)`, lo?.p50, lt?.p50),
        ...r.compared(`${c.name}: p99 (ms)`, lo?.p99, lt?.p99),
        ...r.compared(`${c.name}: notifications/s`, to?.perSecond, tt?.perSecond),
        ...r.compared(`${c.name}: sending CPU per notification (µs)`, cpu(to), cpu(tt)),
        ...(['commits', 'rows', 'walBytes'] as const).flatMap((key) =>
          r.compared(
            `${c.name}: PostgreSQL ${WRITES[key]} per notification`,
            to?.writes?.[key],
            tt?.writes?.[key],
          ),
        ),
      ];
    });

  out.output.unshift(
    `Notifications: one \`serve\` process per database, DELIVERY_CONCURRENCY_PER_WEBHOOK=${settings.concurrency}; ` +
      `${r.whole(nodes)} nodes seeded ALIVE with one CONNECTED tunnel; one webhook to an HTTPS receiver in the ` +
      'runner, verified, and one alert (TUNNEL_STATE_CHANGE): a change is one report, one event, one notification; ' +
      `load average (1 min) at the start ${loadBefore.toFixed(2)}`,
  );
  const latencyRows = [...latencies.values()].map(({ name, latencies: ms, p50, p99 }) => {
    const goals = targetsOf(name);
    const figures = [Math.min(...ms), p50, p99, Math.max(...ms), p50 / goals.p50Ms, p99 / goals.p99Ms];
    return [name, String(ms.length), ...figures.map((x) => x.toFixed(2))];
  });
  r.addTable(
    out,
    `Latency: ${ratePerSecond} changes/s (open loop), ${LATENCY_WARMUP_SECONDS} s untimed then ${latencySeconds} s ` +
      "timed; from the report's send to the signed notification received whole",
    'measurement | changes | min (ms) | p50 (ms) | p99 (ms) | max (ms) | p50 ÷ goal | p99 ÷ goal',
    latencyRows,
  );
  r.addTable(
    out,
    `Throughput: ${r.whole(changes)} changes, one report per node, ${m.REPORTS_IN_FLIGHT} in flight, from the first ` +
      `report (or request) to the last distinct notification received; median of ${roundCount} round(s). Floor: ` +
      `a process POSTing a body the service sent, signed, ${settings.concurrency} in flight. Runner CPU: the ` +
      'receiver and the reports. PostgreSQL writes: commits, rows inserted, updated and deleted ' +
      "(`pg_stat_database`), and the server's WAL bytes (`pg_current_wal_lsn()`), read a second after the round",
    'measurement | notifications/s | ÷ goal | ÷ floor | ÷ Alertmanager | reports answered (ms) | last ' +
      'notification (ms) | sending CPU per notification (µs) | runner CPU per notification (µs) | PostgreSQL ' +
      'commits / rows / WAL bytes per notification',
    throughput,
    [0, 7],
  );
  const spans = otlp.received();
  out.output.push(
    `Tracing on: OTEL_EXPORTER_OTLP_ENDPOINT set to a local collector, every span sampled; it took ` +
      `${r.whole(spans.exports)} exports, ${r.whole(spans.bytes)} bytes`,
  );
  for (const other of others) r.addComparison(out, other.label, comparison(other));
  return workers === undefined ? out : r.merge(out, workers);
}
