export interface ThroughputResult {
  name: string;
  workers: number;
  /** Jobs enqueued per second, `batch` to a statement. */
  enqueuePerSecond: number;
  /** First run's start to last run's start. */
  drainMs: number;
  drainPerSecond: number;
  /** Drain rate divided by the anchor's (the same round's median); undefined without an anchor. */
  ratio?: number;
  /** The workers told to start to the first run. */
  startupMs: number;
  /** The last run to the queue's table seen empty (the runner looks every 10 ms). */
  settleMs: number;
  runsPerProcess: number[];
  runs: number;
  /** Jobs that ran more than once. */
  ranTwice: number;
  /** CPU time of the worker processes from their first run to the end, per job. */
  workerCpuUsPerJob: number;
  /** CPU time of the PostgreSQL server processes of the run's database, per job (undefined on SQLite). */
  databaseCpuUsPerJob: number | undefined;
}

export interface LatencyResult {
  name: string;
  /** Timed jobs with both a commit and a start. */
  jobs: number;
  missing: number;
  /** Jobs whose handler started before the enqueuer noted the commit (a negative latency). */
  beforeCommitSeen: number;
  /** Commits per second the enqueuer achieved over the timed jobs. */
  achievedRate: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  minMs: number;
}

function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function whole(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function throughputRows(results: ThroughputResult[]): string {
  const lines = [
    row([
      'measurement',
      'enqueue (jobs/s)',
      'drain (jobs/s)',
      'ratio to graphile-worker',
      'first run after start (ms)',
      'table empty after last run (ms)',
      'runs per process',
      'worker CPU per job (µs)',
      'PostgreSQL CPU per job (µs)',
    ]),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const r of results) {
    lines.push(
      row([
        r.name,
        whole(r.enqueuePerSecond),
        whole(r.drainPerSecond),
        r.ratio === undefined ? '' : r.ratio.toFixed(2),
        r.startupMs.toFixed(0),
        r.settleMs.toFixed(0),
        r.runsPerProcess.map(whole).join(' + '),
        r.workerCpuUsPerJob.toFixed(0),
        r.databaseCpuUsPerJob === undefined ? 'n/a' : r.databaseCpuUsPerJob.toFixed(0),
      ]),
    );
  }
  return lines.join('\n');
}

export function latencyRows(results: LatencyResult[]): string {
  const lines = [
    row([
      'measurement',
      'jobs',
      'achieved rate (jobs/s)',
      'started before the commit was seen',
      'min (ms)',
      'p50 (ms)',
      'p99 (ms)',
      'max (ms)',
    ]),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const r of results) {
    lines.push(
      row([
        r.name,
        String(r.jobs),
        r.achievedRate.toFixed(0),
        String(r.beforeCommitSeen),
        r.minMs.toFixed(2),
        r.p50Ms.toFixed(2),
        r.p99Ms.toFixed(2),
        r.maxMs.toFixed(2),
      ]),
    );
  }
  return lines.join('\n');
}
