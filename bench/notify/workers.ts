// The throughput round on PostgreSQL, the deliveries in 1, 2 or 4 worker processes. Every count is deployed and
// warmed up first, then the counts take turns, the others frozen (SIGSTOP): the machine's speed drifts over
// minutes by more than the differences measured here, so the ratio is read from rounds that alternate.
import path from 'node:path';
import * as pg from '../lib/postgres.js';
import { setFrozen } from '../lib/processes.js';
import * as r from '../lib/report.js';
import { startService, stopAll, type Service } from '../lib/service.js';
import * as m from './measure.js';
import { startNotifyService, WORKERS_RATIO, type NotifyCase, type NotifyContext } from './service.js';

interface Deployed extends m.Deployment {
  c: NotifyCase;
  db: pg.BenchDatabase;
  services: Service[];
  runs: m.ThroughputRun[];
}

async function round(x: Deployed, context: NotifyContext, flip: number, label: string) {
  await pg.vacuumAnalyze(x.db.url);
  r.progress(`${label}: ${x.c.name}`);
  const burst = { nodes: context.changing, round: flip };
  x.runs.push(await m.measureThroughput(x.c.name, x, context.receiver, burst));
}

export async function measureWorkers(cases: NotifyCase[], context: NotifyContext): Promise<r.SectionResult> {
  const { settings } = context;
  const teardown: (() => Promise<unknown>)[] = [];
  const deployed: Deployed[] = [];
  try {
    for (const c of cases) {
      const db = await pg.createBenchDatabase(settings.postgresUrl);
      teardown.push(db.drop);
      const prefix = path.join(context.logDir, `postgres-workers-${c.workers}`);
      const api = await startNotifyService(context, db.url, `${prefix}-api.log`, { role: 'api' });
      const services: Service[] = [api];
      // Resumed first: a frozen process would not see the signal that stops it.
      teardown.push(() => {
        setFrozen(services, false);
        return stopAll(services);
      });
      const worker = { role: 'worker' as const, nodeOptions: settings.nodeOptions, env: api.env };
      for (let n = 1; n <= c.workers!; n += 1)
        services.push(await startService({ ...worker, logFile: `${prefix}-worker-${n}.log` }));
      const meters = [
        m.processMeter('API', [api]),
        m.processMeter(c.workers === 1 ? 'worker' : 'workers', services.slice(1)),
        m.postgresMeter(db),
      ];
      const x: Deployed = { c, db, api, meters, postgres: db, services, runs: [] };
      await round(x, context, 1, 'warm-up round');
      setFrozen(x.services, true);
      deployed.push(x);
    }
    const commits = () => Promise.all(deployed.map((x) => pg.writeCounters(x.db.url, x.db.name)));
    const before = await commits();
    for (let n = 1; n <= settings.rounds; n += 1)
      for (let k = 0; k < deployed.length; k += 1) {
        const x = deployed[(n - 1 + k) % deployed.length]!;
        setFrozen(x.services, false);
        await round(x, context, n + 1, `round ${n}/${settings.rounds}`);
        setFrozen(x.services, true);
      }
    const after = await commits();
    return summary(deployed, (i) => after[i]!.commits - before[i]!.commits, context);
  } finally {
    for (const step of teardown.reverse()) await step();
  }
}

function summary(deployed: Deployed[], commits: (i: number) => number, context: NotifyContext) {
  const rows = deployed.map((x, i) => {
    const counted = x.runs.slice(1);
    const received = counted.reduce((sum, run) => sum + run.notifications, 0);
    const median = [...counted].sort((a, b) => a.perSecond - b.perSecond)[(counted.length - 1) >> 1]!;
    return { x, counted, median, transactions: commits(i) / received };
  });
  const one = rows.find((row) => row.x.c.workers === 1)?.median.perSecond;
  const runs = deployed.flatMap((x) => x.runs);
  const twice = runs.reduce((sum, run) => sum + run.duplicates, 0);
  const out = r.emptyResult();
  const most = rows.reduce((a, b) => (b.x.c.workers! > a.x.c.workers! ? b : a), rows[0]!);
  const label = "notifications/s ÷ 1 worker's (same run)";
  if (one && most.x.c.workers !== 1)
    out.checks.push(r.goal(most.x.c.name, label, most.median.perSecond / one, WORKERS_RATIO, '×', false));
  const goal = `no notification received twice, in any of ${runs.length} rounds (warm-up included) of any count`;
  out.checks.push(r.exactly('notify workers: PostgreSQL: no duplicate sends', goal, twice));
  out.warnings.push(...runs.flatMap((run) => m.runWarnings(run, context.settings.changes)));
  const table = rows.map(({ x, counted, median, transactions }) => [
    x.c.name,
    r.whole(median.perSecond),
    one === undefined ? '' : (median.perSecond / one).toFixed(2),
    `${counted.map((run) => r.whole(run.perSecond)).join(' / ')} (warm-up ${r.whole(x.runs[0]!.perSecond)})`,
    String(x.runs.reduce((sum, run) => sum + run.duplicates, 0)),
    r.whole(median.reportsMs ?? NaN),
    m.sendersCpu(median),
    r.whole(m.cpuPerNotification(median)),
    transactions.toFixed(1),
  ]);
  r.addTable(
    out,
    `Worker processes: \`serve --role api\` beside 1, 2 or 4 \`serve --role worker\`; a warm-up round, then ` +
      `median of ${context.settings.rounds} round(s), the counts taking turns, the others frozen (SIGSTOP)`,
    'measurement | notifications/s | ÷ 1 worker | each round (/s) | duplicates (all rounds) | reports answered (ms) | ' +
      'CPU per notification (µs) | total CPU per notification (µs) | ' +
      'PostgreSQL transactions per notification',
    table,
    [0, 3, 6],
  );
  return out;
}
