// What every section prints with: Markdown tables (readable in a terminal, ready for docs/benchmarks.md), one
// PASS/MISS/SKIP line per goal, the statistics the figures use, and the choice of cases by --only.
import type { Common } from './options.js';

export interface Check {
  subject: string;
  goal: string;
  actual: string;
  met: boolean;
  /** Not measured in this run (e.g. PostgreSQL did not answer): neither met nor missed. */
  skipped?: boolean;
}

export interface SectionResult {
  output: string[];
  checks: Check[];
  /** Printed last, each after `warning: `. */
  warnings: string[];
}

export const emptyResult = (...output: string[]): SectionResult => ({ output, checks: [], warnings: [] });

/** A measurement; an anchor (a reference measured beside others) runs only with a case that names it. */
export interface Case {
  name: string;
  anchor?: true;
  anchors?: string[];
}

export type RunSection<C extends Case> = (cases: C[], common: Common) => Promise<SectionResult>;

/** Every case without --only; else the cases whose name contains it, with their anchors. */
export function select<C extends Case>(cases: C[], only: string | undefined): C[] {
  const picked = cases.filter((c) => !c.anchor && c.name.toLowerCase().includes((only ?? '').toLowerCase()));
  const anchors = new Set(picked.flatMap((c) => c.anchors ?? []));
  return cases.filter((c) => picked.includes(c) || anchors.has(c.name));
}

export const progress = (line: string) => process.stderr.write(`  ${line}\n`);
export const whole = (n: number) => (Number.isNaN(n) ? 'n/a' : Math.round(n).toLocaleString('en-US'));
export const fixed = (n: number | undefined, digits: number) =>
  n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(digits);

export const merge = (a: SectionResult, b: SectionResult): SectionResult => ({
  output: [...a.output, ...b.output],
  checks: [...a.checks, ...b.checks],
  warnings: [...a.warnings, ...b.warnings],
});

export function addTable(out: SectionResult, intro: string, head: string, rows: string[][], left?: number[]) {
  if (rows.length > 0) out.output.push(`\n${intro}\n`, table(head, rows, left));
}

/** A figure of this build beside another build's (--compare) and their ratio; nothing if either is missing. */
export function compared(figure: string, ours?: number, theirs?: number): string[][] {
  if (ours === undefined || theirs === undefined) return [];
  const shown = (x: number) => (x >= 100 ? whole(x) : x.toFixed(2));
  return [[figure, shown(ours), shown(theirs), (ours / theirs).toFixed(2)]];
}

/** The table of `compared` rows, after the rows they come from. */
export function addComparison(out: SectionResult, them: string | undefined, rows: string[][]) {
  const head = `figure | this build | ${them} | this build ÷ ${them}`;
  addTable(out, `This build against ${them}, measured in the same run (the rows above)`, head, rows);
}

/** A Markdown table from `a | b | c` headings; columns are right-aligned except those in `left`. */
export function table(head: string, rows: string[][], left = [0]): string {
  const names = head.split(' | ');
  const rule = names.map((_, i) => (left.includes(i) ? '---' : '---:'));
  return [names, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

export const checksList = (checks: Check[]) =>
  checks
    .map((c) =>
      c.skipped
        ? `SKIP  ${c.subject}: ${c.actual}`
        : `${c.met ? 'PASS' : 'MISS'}  ${c.subject}: ${c.goal} (measured ${c.actual})`,
    )
    .join('\n');

/** A goal of at least or at most `limit`; a miss says by how much. */
export function goal(subject: string, label: string, x: number, limit: number, unit: string, atMost = true) {
  const met = atMost ? x <= limit : x >= limit;
  const off = met ? '' : `; ${Math.abs(x - limit).toFixed(2)} ${unit} ${atMost ? 'over' : 'short'}`;
  const actual = `${x.toFixed(2)} ${unit}${off}`;
  return { subject, goal: `${label} ${atMost ? '≤' : '≥'} ${limit} ${unit}`, actual, met } satisfies Check;
}

/** A goal on a count that must be `expected`, e.g. no duplicates. */
export const exactly = (subject: string, goal: string, value: number, expected = 0): Check => {
  return { subject, goal, actual: whole(value), met: value === expected };
};

export const skippedChecks = (names: string[], why: string): Check[] =>
  names.map((subject) => ({ subject, goal: '', actual: why, met: false, skipped: true }));

/** Nearest-rank percentile (0 ≤ p ≤ 100; 0 is the least value); NaN for no values. */
export function percentile(values: ArrayLike<number>, p: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(Math.max(1, Math.ceil((p / 100) * sorted.length)), sorted.length) - 1] ?? Number.NaN;
}

/** Each measurement's rounds; its figure is the median round by `key`, so one disturbed round does not decide. */
export class Rounds<T> {
  readonly all = new Map<string, T[]>();
  constructor(private readonly key: (round: T) => number) {}

  add = (name: string, round: T) => void this.all.set(name, [...(this.all.get(name) ?? []), round]);

  median(name: string): T | undefined {
    const rounds = [...(this.all.get(name) ?? [])].sort((a, b) => this.key(a) - this.key(b));
    return rounds[Math.floor((rounds.length - 1) / 2)];
  }
}

/** Waits until `condition` holds, looking every `everyMs`; throws naming `what` after two minutes. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, everyMs = 5) {
  const deadline = Date.now() + 120_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
