import type { Check } from '../lib/report.js';
import { TARGETS } from './cases.js';
import type { LatencyResult, ThroughputRun } from './measure.js';

export interface ThroughputRow extends ThroughputRun {
  /** Notifications/s ÷ the anchor's median round; undefined for an anchor's own row or a skipped anchor. */
  floorRatio?: number | undefined;
  alertmanagerRatio?: number | undefined;
}

export function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}

export function whole(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

const ms = (value: number | undefined) => (value === undefined ? 'n/a' : value.toFixed(0));
const ratio = (value: number | undefined) => (value === undefined ? '' : value.toFixed(2));

/** CPU per notification of each sending process, in µs, e.g. `service 310 + PostgreSQL 95`. */
export function sendersCpu(run: ThroughputRun): string {
  return run.senders
    .map(
      ({ label, ms: cpu }) =>
        `${label} ${cpu === undefined ? 'n/a' : whole((cpu * 1000) / run.notifications)}`,
    )
    .join(' + ');
}

export function latencyTable(results: LatencyResult[]): string {
  const lines = [
    row([
      'measurement',
      'changes',
      'achieved rate (/s)',
      'min (ms)',
      'p50 (ms)',
      'p99 (ms)',
      'max (ms)',
      `p50 ÷ ${TARGETS.p50Ms} ms`,
      `p99 ÷ ${TARGETS.p99Ms} ms`,
    ]),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const r of results) {
    lines.push(
      row([
        r.name,
        String(r.changes),
        r.achievedRate.toFixed(1),
        r.minMs.toFixed(2),
        r.p50Ms.toFixed(2),
        r.p99Ms.toFixed(2),
        r.maxMs.toFixed(2),
        (r.p50Ms / TARGETS.p50Ms).toFixed(2),
        (r.p99Ms / TARGETS.p99Ms).toFixed(2),
      ]),
    );
  }
  return lines.join('\n');
}

export function throughputTable(rows: ThroughputRow[]): string {
  const lines = [
    row([
      'measurement',
      'notifications',
      'first change → last notification (ms)',
      'notifications/s',
      `÷ ${whole(TARGETS.notificationsPerSecond)}/s`,
      '÷ floor',
      '÷ Alertmanager',
      'reports answered (ms)',
      'first notification (ms)',
      'requests',
      'TLS connections',
      'sending CPU per notification (µs)',
      'runner CPU per notification (µs)',
    ]),
    row([
      '---',
      '---:',
      '---:',
      '---:',
      '---:',
      '---:',
      '---:',
      '---:',
      '---:',
      '---:',
      '---:',
      '---',
      '---:',
    ]),
  ];
  for (const r of rows) {
    lines.push(
      row([
        r.name,
        whole(r.notifications),
        ms(r.elapsedMs),
        whole(r.perSecond),
        (r.perSecond / TARGETS.notificationsPerSecond).toFixed(2),
        ratio(r.floorRatio),
        ratio(r.alertmanagerRatio),
        ms(r.reportsMs),
        ms(r.firstMs),
        whole(r.requests),
        whole(r.connections),
        sendersCpu(r),
        whole((r.runnerCpuMs * 1000) / r.notifications),
      ]),
    );
  }
  return lines.join('\n');
}

export function latencyChecks(result: LatencyResult): Check[] {
  return [
    ['p50', result.p50Ms, TARGETS.p50Ms],
    ['p99', result.p99Ms, TARGETS.p99Ms],
  ].map(([label, value, max]) => {
    const [measured, limit] = [Number(value), Number(max)];
    const met = measured <= limit;
    return {
      subject: result.name,
      goal: `${String(label)} ≤ ${limit} ms from the report's send to the notification's arrival`,
      actual: `${measured.toFixed(2)} ms` + (met ? '' : `; ${(measured - limit).toFixed(2)} ms over`),
      met,
    };
  });
}

export function throughputChecks(
  result: ThroughputRow,
  floor: ThroughputRun | undefined,
  alertmanager: ThroughputRun | string | undefined,
): Check[] {
  const rate = (n: number) => `${whole(n)}/s`;
  const checks: Check[] = [];
  const minRate = TARGETS.notificationsPerSecond;
  const rateMet = result.perSecond >= minRate;
  checks.push({
    subject: result.name,
    goal: `≥ ${rate(minRate)}`,
    actual:
      rate(result.perSecond) +
      (rateMet
        ? ''
        : `; ${rate(minRate - result.perSecond)} (${(100 * (1 - result.perSecond / minRate)).toFixed(0)} %) short`),
    met: rateMet,
  });
  if (floor !== undefined && result.floorRatio !== undefined) {
    const met = result.floorRatio >= TARGETS.floorRatio;
    checks.push({
      subject: result.name,
      goal: `≥ ${TARGETS.floorRatio} × the undici floor's rate (same run, same receiver, same concurrency)`,
      actual: `${result.floorRatio.toFixed(2)}: ${rate(result.perSecond)} against ${rate(floor.perSecond)}`,
      met,
    });
  }
  if (typeof alertmanager === 'string') {
    checks.push({ subject: result.name, goal: '', actual: alertmanager, met: false, skipped: true });
  } else if (alertmanager !== undefined && result.alertmanagerRatio !== undefined) {
    const met = result.alertmanagerRatio > TARGETS.alertmanagerRatio;
    checks.push({
      subject: result.name,
      goal: "faster than Alertmanager's rate (same run, same receiver)",
      actual: `${result.alertmanagerRatio.toFixed(2)}: ${rate(result.perSecond)} against ${rate(alertmanager.perSecond)}`,
      met,
    });
  }
  return checks;
}

/** A warning line for a round whose figures describe something else than intended. */
export function runWarnings(run: ThroughputRun, expected: number): string[] {
  const problems: string[] = [];
  if (run.notifications !== expected) problems.push(`${run.notifications} of ${expected} notifications`);
  if (run.duplicates > 0) problems.push(`${run.duplicates} notifications received twice`);
  if (run.badSignatures > 0) problems.push(`${run.badSignatures} requests with a wrong signature`);
  if (run.failed > 0) problems.push(`${run.failed} requests not answered 2xx`);
  return problems.length === 0 ? [] : [`warning: ${run.name}: ${problems.join('; ')}`];
}

/** Of several rounds, the one with the median rate. */
export function medianRun(runs: ThroughputRun[]): ThroughputRun {
  const sorted = [...runs].sort((a, b) => a.perSecond - b.perSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (median === undefined) throw new Error('no rounds measured');
  return median;
}
