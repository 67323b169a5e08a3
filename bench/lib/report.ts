import type { LoadResult } from './load.js';

export interface ScenarioOutcome {
  name: string;
  result: LoadResult;
  /** Server CPU time per answered request, in microseconds: the figure neighbours disturb least. */
  cpuUsPerRequest: number | undefined;
  /** Throughput divided by the reference scenario's; undefined when there is none. */
  ratio: number | undefined;
}

export interface Check {
  subject: string;
  goal: string;
  actual: string;
  met: boolean;
  /** Not measured in this run (e.g. PostgreSQL did not answer): neither met nor missed. */
  skipped?: boolean;
}

function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** A Markdown table, readable in a terminal and ready to paste into docs/benchmarks.md. */
export function resultsTable(outcomes: ScenarioOutcome[]): string {
  const lines = [
    row(['scenario', 'req/s', 'p50 (ms)', 'p99 (ms)', 'ratio to baseline', 'server CPU per request (µs)']),
    row(['---', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const { name, result, ratio, cpuUsPerRequest } of outcomes) {
    lines.push(
      row([
        name,
        Math.round(result.requestsPerSecond).toLocaleString('en-US'),
        String(result.p50Ms),
        String(result.p99Ms),
        ratio === undefined ? 'n/a' : ratio.toFixed(2),
        cpuUsPerRequest === undefined ? 'n/a' : String(Math.round(cpuUsPerRequest)),
      ]),
    );
  }
  return lines.join('\n');
}

export function checksList(checks: Check[]): string {
  return checks
    .map((check) =>
      check.skipped === true
        ? `SKIP  ${check.subject}: ${check.actual}`
        : `${check.met ? 'PASS' : 'MISS'}  ${check.subject}: ${check.goal} (measured ${check.actual})`,
    )
    .join('\n');
}

/** Answers outside 2xx or connection errors mean the figures describe the wrong thing. */
export function spoiledWarnings(outcomes: ScenarioOutcome[]): string[] {
  return outcomes
    .filter(({ result }) => result.non2xx > 0 || result.errors > 0)
    .map(
      ({ name, result }) =>
        `warning: ${name}: ${result.non2xx} non-2xx answers and ${result.errors} errors in ${result.total} requests`,
    );
}

export interface SeriesSummary {
  label: string;
  calls: number;
  medianMs: number;
  p99Ms: number;
}

/** Sequential latencies: one row per timed series (a measurement and its floor). */
export function latencyTable(rows: SeriesSummary[]): string {
  const lines = [row(['sequence', 'calls', 'median (ms)', 'p99 (ms)']), row(['---', '---:', '---:', '---:'])];
  for (const { label, calls, medianMs, p99Ms } of rows) {
    lines.push(row([label, String(calls), medianMs.toFixed(2), p99Ms.toFixed(2)]));
  }
  return lines.join('\n');
}
