import type { Check } from '../lib/report.js';
import { TARGETS, type FleetCase } from './cases.js';
import type { SweepResult, SweepRun } from './sweep.js';

export interface ProcessCpu {
  label: string;
  /** CPU time over the measured window, in ms; undefined when it could not be read (no /proc). */
  cpuMs: number | undefined;
  rssMB?: number | undefined;
}

export interface ReportsResult {
  name: string;
  nodes: number;
  offeredPerSecond: number;
  achievedPerSecond: number;
  answered: number;
  /** 2xx answers that arrived within the window: what the CPU over the window was spent on. */
  answeredInWindow: number;
  failed: number;
  skipped: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  sendLagP99Ms: number;
  windowMs: number;
  /** Every server-side process (the service's, and PostgreSQL's serving the run's database). */
  processes: ProcessCpu[];
  /** The bench process, which sends the reports. */
  sender: ProcessCpu;
  /** The whole machine's busy cores over the window: what is not ours was someone else's. */
  machineCores: number | undefined;
  changes: number;
  /** Events the service stored over the warm-up and the window: one per change when all is well. */
  events: number;
  primeReportsPerSecond: number;
  seedMs: number;
}

export interface SweepCaseResult extends SweepResult {
  name: string;
}

function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

export function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}

export function whole(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Nearest-rank percentile of values sorted ascending. */
export function sortedPercentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? Number.NaN;
}

export function cores(cpuMs: number | undefined, windowMs: number): number | undefined {
  return cpuMs === undefined ? undefined : cpuMs / windowMs;
}

/** Server CPU over the window in cores: every server-side process together. */
export function serverCores(result: ReportsResult): number | undefined {
  let total = 0;
  for (const process of result.processes) {
    if (process.cpuMs === undefined) return undefined;
    total += process.cpuMs;
  }
  return total / result.windowMs;
}

const fixed = (n: number | undefined, digits: number) => (n === undefined ? 'n/a' : n.toFixed(digits));

export function reportsTable(results: ReportsResult[]): string {
  const lines = [
    row([
      'measurement',
      'offered (reports/s)',
      'achieved (reports/s)',
      'achieved ÷ offered',
      'p50 (ms)',
      'p99 (ms)',
      `p99 ÷ ${TARGETS.p99Ms} ms`,
      'max (ms)',
      'failed',
      'server CPU (cores)',
      `÷ ${TARGETS.cores} core`,
      'events ÷ changes',
    ]),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const r of results) {
    const serverCpu = serverCores(r);
    lines.push(
      row([
        r.name,
        whole(r.offeredPerSecond),
        whole(r.achievedPerSecond),
        (r.achievedPerSecond / r.offeredPerSecond).toFixed(3),
        r.p50Ms.toFixed(2),
        r.p99Ms.toFixed(2),
        (r.p99Ms / TARGETS.p99Ms).toFixed(2),
        r.maxMs.toFixed(1),
        whole(r.failed + r.skipped),
        fixed(serverCpu, 2),
        fixed(serverCpu === undefined ? undefined : serverCpu / TARGETS.cores, 2),
        `${whole(r.events)} ÷ ${whole(r.changes)}`,
      ]),
    );
  }
  return lines.join('\n');
}

/** Where the CPU went: each process over the window, in cores and per answered report. */
export function cpuTable(results: ReportsResult[]): string {
  const lines = [
    row(['measurement', 'process', 'CPU (cores)', 'CPU per report (µs)', 'RSS after (MB)']),
    row(['---', '---', '---:', '---:', '---:']),
  ];
  for (const r of results) {
    const ours = [...r.processes, r.sender];
    for (const process of ours) {
      lines.push(
        row([
          r.name,
          process.label,
          fixed(cores(process.cpuMs, r.windowMs), 2),
          process.cpuMs === undefined
            ? 'n/a'
            : whole((process.cpuMs * 1000) / Math.max(1, r.answeredInWindow)),
          fixed(process.rssMB, 0),
        ]),
      );
    }
    const measured = ours.reduce((sum, process) => sum + (process.cpuMs ?? 0), 0) / r.windowMs;
    const others = r.machineCores === undefined ? undefined : Math.max(0, r.machineCores - measured);
    lines.push(row([r.name, 'anything else on the machine', fixed(others, 2), '', '']));
  }
  return lines.join('\n');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

export function sweepMedianMs(runs: { ms: number }[]): number {
  return median(runs.map((run) => run.ms));
}

export function sweepTable(results: SweepCaseResult[]): string {
  const lines = [
    row([
      'measurement',
      'ALIVE nodes',
      'silent nodes',
      'runs',
      'turned per run',
      'median (ms)',
      'min–max (ms)',
      `median ÷ ${TARGETS.sweepMs} ms`,
      'per turned node (ms)',
    ]),
    row(['---', '---:', '---', '---:', '---', '---:', '---:', '---:', '---:']),
  ];
  for (const r of results) {
    for (const [label, runs] of [
      ['none', r.quiet],
      [whole(r.silentPerRun), r.silent],
    ] as const) {
      const ms = runs.map((run) => run.ms);
      const middle = median(ms);
      const turned = runs.map((run) => run.turned);
      const perNode = median(runs.filter((run) => run.turned > 0).map((run) => run.ms / run.turned));
      lines.push(
        row([
          r.name,
          whole(r.aliveBefore),
          label,
          String(runs.length),
          [...new Set(turned)].map(whole).join(', '),
          middle.toFixed(2),
          `${Math.min(...ms).toFixed(2)}–${Math.max(...ms).toFixed(2)}`,
          (middle / TARGETS.sweepMs).toFixed(2),
          Number.isNaN(perNode) ? '' : perNode.toFixed(3),
        ]),
      );
    }
  }
  return lines.join('\n');
}

export function reportsChecks(c: FleetCase, r: ReportsResult): Check[] {
  const checks: Check[] = [];
  const { minAchievedRatio, maxP99Ms, maxCores } = c.goals ?? {};
  if (minAchievedRatio !== undefined) {
    const ratio = r.achievedPerSecond / r.offeredPerSecond;
    checks.push({
      subject: c.name,
      goal: `${whole(r.offeredPerSecond)} reports/s sustained (achieved ≥ ${minAchievedRatio} × offered, none failed)`,
      actual: `${whole(r.achievedPerSecond)} reports/s, ${ratio.toFixed(3)} × offered, ${whole(r.failed + r.skipped)} failed`,
      met: ratio >= minAchievedRatio && r.failed + r.skipped === 0,
    });
  }
  if (maxP99Ms !== undefined) {
    const met = r.p99Ms <= maxP99Ms;
    checks.push({
      subject: c.name,
      goal: `p99 ≤ ${maxP99Ms} ms`,
      actual: `${r.p99Ms.toFixed(2)} ms` + (met ? '' : `, ${(r.p99Ms / maxP99Ms).toFixed(2)} × the goal`),
      met,
    });
  }
  if (maxCores !== undefined) {
    const used = serverCores(r);
    checks.push({
      subject: c.name,
      goal: `server CPU ≤ ${maxCores} core`,
      actual: used === undefined ? 'n/a (no /proc)' : `${used.toFixed(2)} cores`,
      met: used !== undefined && used <= maxCores,
    });
  }
  return checks;
}

export function sweepChecks(c: FleetCase, r: SweepCaseResult): Check[] {
  const max = c.goals?.maxSweepMs;
  if (max === undefined) return [];
  const sets: [string, SweepRun[]][] = [
    ['no silent node', r.quiet],
    [`${whole(r.silentPerRun)} silent nodes`, r.silent],
  ];
  return sets.map(([label, runs]) => {
    const ms = sweepMedianMs(runs);
    return {
      subject: `${c.name}, ${whole(r.aliveBefore)} ALIVE nodes, ${label}`,
      goal: `a sweep ≤ ${max} ms (median)`,
      actual: `${ms.toFixed(2)} ms` + (ms <= max ? '' : `, ${(ms / max).toFixed(2)} × the goal`),
      met: ms <= max,
    };
  });
}
