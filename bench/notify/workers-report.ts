// The worker-scaling measurement's printed part: what ran, its table, and its checks.
import type { Check } from '../lib/report.js';
import { TARGETS } from './cases.js';
import { REPORTS_IN_FLIGHT, type ThroughputRun } from './measure.js';
import type { NotifyOptions } from './options.js';
import { medianRun, row, sendersCpu, whole } from './report.js';
import type { WorkersRounds } from './workers.js';

export interface WorkersRow {
  name: string;
  workers: number;
  warmUp: ThroughputRun;
  rounds: ThroughputRun[];
  median: ThroughputRun;
  transactionsPerNotification: number;
  /** The median's rate ÷ the 1-worker median's; undefined when one worker did not run. */
  ratio: number | undefined;
}

function workersRows(results: WorkersRounds[]): WorkersRow[] {
  const rows = results.map(({ case: c, warmUp, rounds, transactionsPerNotification }) => ({
    name: c.name,
    workers: c.workers,
    warmUp,
    rounds,
    median: medianRun(rounds),
    transactionsPerNotification,
  }));
  const one = rows.find((r) => r.workers === 1)?.median.perSecond;
  return rows.map((r) => ({ ...r, ratio: one === undefined ? undefined : r.median.perSecond / one }));
}

const everyRound = (r: WorkersRow) => [r.warmUp, ...r.rounds];
const duplicates = (r: WorkersRow) => everyRound(r).reduce((sum, run) => sum + run.duplicates, 0);

/** All the sending side's CPU per notification, in µs; undefined when a process's could not be read. */
function totalCpu(run: ThroughputRun): number | undefined {
  let ms = 0;
  for (const sender of run.senders) {
    if (sender.ms === undefined) return undefined;
    ms += sender.ms;
  }
  return (ms * 1000) / run.notifications;
}

export function workersTable(rows: WorkersRow[]): string {
  const lines = [
    row([
      'measurement',
      'notifications/s',
      '÷ 1 worker',
      'each round (/s)',
      'warm-up round (/s)',
      'duplicates (all rounds)',
      'reports answered (ms)',
      'TLS connections to the receiver',
      'CPU per notification (µs)',
      'total CPU per notification (µs)',
      'PostgreSQL transactions per notification',
    ]),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---', '---:', '---:']),
  ];
  for (const r of rows) {
    const total = totalCpu(r.median);
    lines.push(
      row([
        r.name,
        whole(r.median.perSecond),
        r.ratio === undefined ? '' : r.ratio.toFixed(2),
        r.rounds.map((run) => whole(run.perSecond)).join(' / '),
        whole(r.warmUp.perSecond),
        String(duplicates(r)),
        r.median.reportsMs === undefined ? 'n/a' : whole(r.median.reportsMs),
        whole(r.median.connections),
        sendersCpu(r.median),
        total === undefined ? 'n/a' : whole(total),
        r.transactionsPerNotification.toFixed(1),
      ]),
    );
  }
  return lines.join('\n');
}

/** The most workers against one, and no notification sent twice in any round. */
function workersChecks(rows: WorkersRow[]): Check[] {
  const checks: Check[] = [];
  const one = rows.find((r) => r.workers === 1);
  const most = rows.reduce<WorkersRow | undefined>(
    (m, r) => (m && m.workers >= r.workers ? m : r),
    undefined,
  );
  if (one !== undefined && most !== undefined && most !== one && most.ratio !== undefined) {
    checks.push({
      subject: most.name,
      goal: `≥ ${TARGETS.workersRatio} × 1 worker's notifications/s (same run)`,
      actual: `${most.ratio.toFixed(3)}: ${whole(most.median.perSecond)}/s against ${whole(one.median.perSecond)}/s`,
      met: most.ratio >= TARGETS.workersRatio,
    });
  }
  const runs = rows.flatMap(everyRound);
  const twice = rows.reduce((sum, r) => sum + duplicates(r), 0);
  const received = runs.reduce((sum, run) => sum + run.notifications, 0);
  checks.push({
    subject: 'notify workers: PostgreSQL',
    goal: 'no duplicate sends: no notification received twice, in any round (warm-up included) of any worker count',
    actual: `${twice} duplicates in ${runs.length} rounds, ${whole(received)} notifications`,
    met: twice === 0,
  });
  return checks;
}

/** The lines printed after the section's other tables, and the checks; nothing when no worker count ran. */
export function workersSummary(
  results: WorkersRounds[],
  facts: { settings: NotifyOptions; nodes: number },
): { output: string[]; checks: Check[] } {
  const rows = workersRows(results);
  if (rows.length === 0) return { output: [], checks: [] };
  const { settings } = facts;
  const counts = rows.map((r) => r.workers).join(', ');
  const seeds = results.map((r) => `${(r.seedMs / 1000).toFixed(1)} s`).join(', ');
  const rounds = settings.rounds === 1 ? 'one round' : `median of ${settings.rounds} rounds`;
  const output = [
    `\nWorker processes: the throughput round on PostgreSQL with the API alone in one \`serve --role api\` ` +
      `process and the deliveries in ${counts} \`worker\` processes beside it, with its environment ` +
      `(DELIVERY_CONCURRENCY_PER_WEBHOOK=${settings.concurrency} in each process); a delivery is then a job ` +
      'that any worker claims (FOR UPDATE SKIP LOCKED), woken by LISTEN/NOTIFY. Each worker count has a fresh ' +
      `database with ${whole(facts.nodes)} nodes seeded ALIVE with one CONNECTED tunnel each (${seeds}), ` +
      'through the API one webhook to the receiver, verified, and one alert (TUNNEL_STATE_CHANGE on the root ' +
      'organization, channel webhook), and its processes kept for its rounds. The counts take turns, round ' +
      'after round, starting with a different one each time; the counts not measuring are frozen (SIGSTOP). ' +
      `${whole(settings.changes)} changes, ${REPORTS_IN_FLIGHT} reports in flight, a warm-up round not ` +
      `counted, then ${rounds}. CPU: the API ` +
      'process, the worker processes together, and the PostgreSQL backends of its database (median round); ' +
      "PostgreSQL transactions: the database's commits over all of the count's rounds (pg_stat_database)\n",
    workersTable(rows),
  ];
  return { output, checks: workersChecks(rows) };
}
