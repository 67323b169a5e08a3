// The notification section: from an agent's report that changes a tunnel's state to the signed notification
// at a local HTTPS receiver, its latency and its throughput on SQLite and PostgreSQL, beside the undici floor,
// Alertmanager, this build with tracing on and (--compare) another build; then 1, 2 and 4 worker processes.
// The method is in docs/benchmarks.md, "Notifications".
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findAlertmanager } from '../lib/alertmanager.js';
import { compareDir, type Common } from '../lib/options.js';
import { startOtlpSink } from '../lib/otlp-sink.js';
import * as pg from '../lib/postgres.js';
import { startReceiver } from '../lib/receiver.js';
import * as r from '../lib/report.js';
import { otherBuild, stopAll, THIS_BUILD, type Build, type Service } from '../lib/service.js';
import { ALERTMANAGER, FLOOR, measureAlertmanager, measureFloor } from './anchors.js';
import * as m from './measure.js';
import { notifySettings, startNotifyService, targetsOf, type NotifyCase } from './service.js';
import { measureWorkers } from './workers.js';

const LATENCY_WARMUP_SECONDS = 2;
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
const ratio = (a: number, b?: number) => r.fixed(b === undefined ? undefined : a / b, 2);
type Latency = Awaited<ReturnType<typeof m.measureLatency>>;

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
  if (of('alertmanager').length > 0)
    out.output.push(alertmanager?.version ?? 'Alertmanager is not installed: its anchor is skipped');
  // This build again with tracing on, exporting every span to a local collector: what tracing costs.
  const otlp = await startOtlpSink();
  const traced = { ...THIS_BUILD, label: 'tracing on', env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } };
  const compare = compareDir === undefined ? undefined : otherBuild(compareDir);
  if (compare !== undefined) out.output.push(`Compared with ${compare.label} (${compare.root})`);
  const others = [traced, ...(compare ? [compare] : [])];
  const builds = [THIS_BUILD, ...others];
  // This build's measurements keep their names (and goals); another build's carry its label.
  const named = (c: NotifyCase, build: Build) =>
    build === THIS_BUILD ? c.name : `${c.name} (${build.label})`;

  // Nodes 0 … changes-1 change once a throughput round; the ones after them once in the latency runs.
  const latencyWarmup = ratePerSecond * LATENCY_WARMUP_SECONDS;
  const latencyNodes = range(changes, latencyWarmup + ratePerSecond * latencySeconds);
  const secret = randomBytes(24).toString('base64url');
  const receiver = await startReceiver(settings.certificates, secret);
  const nodes = changes + latencyNodes.length;
  const context = { settings, receiver, secret, logDir, nodes, changing: range(0, changes) };
  const latencies = new Map<string, Latency>();
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
          const service = await startNotifyService(context, url, path.join(logDir, `${kind}-${n}.log`), {
            build,
          });
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
        const am = alertmanager && { ...anchor(ALERTMANAGER, round), binary: alertmanager.path };
        if (am) rounds.add(ALERTMANAGER, await measureAlertmanager(am, receiver, settings));
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
    const goals = targetsOf(name);
    const [x, cpu] = [run.perSecond, goals.cpuPerNotificationUs];
    if (ours) out.checks.push(r.goal(name, 'notifications', x, goals.perSecond, '/s', false));
    const versusAm = "÷ Alertmanager's rate (same run)";
    if (ours && am)
      out.checks.push(r.goal(name, versusAm, x / am.perSecond, goals.alertmanagerRatio, '×', false));
    if (ours && cpu)
      out.checks.push(r.goal(name, 'service CPU per notification', m.cpuPerNotification(run), cpu, 'µs'));
    const w = run.writes;
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
      w ? `${w.commits.toFixed(2)} / ${w.rows.toFixed(2)} / ${r.whole(w.walBytes)}` : '',
    ];
  });
  // Every figure of a measurement, to set this build's beside another build's.
  const figures = (name: string): Record<string, number | undefined> => {
    const [latency, run] = [latencies.get(name), rounds.median(name)];
    return {
      'p50 (ms)': latency?.p50,
      'p99 (ms)': latency?.p99,
      'notifications/s': run?.perSecond,
      'sending CPU per notification (µs)': run && m.cpuPerNotification(run),
      'PostgreSQL commits per notification': run?.writes?.commits,
      'PostgreSQL rows written per notification': run?.writes?.rows,
      'PostgreSQL WAL bytes per notification': run?.writes?.walBytes,
    };
  };
  const comparison = (other: Build) =>
    runnable.flatMap((c) => {
      const [ours, theirs] = [figures(c.name), figures(named(c, other))];
      return Object.keys(ours).flatMap((figure) =>
        r.compared(`${c.name}: ${figure}`, ours[figure], theirs[figure]),
      );
    });

  out.output.unshift(
    `Notifications: DELIVERY_CONCURRENCY_PER_WEBHOOK=${settings.concurrency}, ${r.whole(nodes)} nodes seeded, ` +
      `one webhook, one TUNNEL_STATE_CHANGE alert; load average (1 min) at the start ${loadBefore.toFixed(2)}`,
  );
  const latencyRows = [...latencies.values()].map(({ name, latencies: ms, p50, p99 }) => {
    const goals = targetsOf(name);
    const figures = [Math.min(...ms), p50, p99, Math.max(...ms), p50 / goals.p50Ms, p99 / goals.p99Ms];
    return [name, String(ms.length), ...figures.map((x) => x.toFixed(2))];
  });
  r.addTable(
    out,
    `Latency: ${ratePerSecond} changes/s, ${LATENCY_WARMUP_SECONDS} s untimed then ${latencySeconds} s timed`,
    'measurement | changes | min (ms) | p50 (ms) | p99 (ms) | max (ms) | p50 ÷ goal | p99 ÷ goal',
    latencyRows,
  );
  r.addTable(
    out,
    `Throughput: ${r.whole(changes)} changes, ${m.REPORTS_IN_FLIGHT} reports in flight; median of ${roundCount} round(s)`,
    'measurement | notifications/s | ÷ goal | ÷ floor | ÷ Alertmanager | reports answered (ms) | last ' +
      'notification (ms) | sending CPU per notification (µs) | runner CPU per notification (µs) | PostgreSQL ' +
      'commits / rows / WAL bytes per notification',
    throughput,
    [0, 7],
  );
  const spans = otlp.received();
  if (latencies.size + rounds.all.size > 0)
    out.output.push(
      `Tracing on: ${r.whole(spans.exports)} exports, ${r.whole(spans.bytes)} bytes to the collector`,
    );
  for (const other of others) r.addComparison(out, other.label, comparison(other));
  return workers === undefined ? out : r.merge(out, workers);
}
