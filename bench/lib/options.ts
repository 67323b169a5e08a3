// The command line (`npm run bench -- --only notify --notify-rounds 1`): read once, by every section.
import { parseArgs } from 'node:util';
import type { BenchCertificates } from './tls.js';

/** What every section is given: where its files go, the Node options, PostgreSQL, the bench CA. */
export interface Common {
  workDir: string;
  nodeOptions: string[];
  postgresUrl: string;
  certificates: BenchCertificates;
}

// In the order of the sections that read them: HTTP, job queue, fleet, notifications, soak.
const DEFAULTS = {
  ...{ connections: 50, duration: 10, warmup: 3, idle: 3, rounds: 1 },
  ...{ jobs: 20_000, 'job-batch': 500, 'job-concurrency': 24, 'job-rate': 200, 'job-seconds': 10 },
  ...{ 'job-rounds': 3, 'fleet-nodes': 100_000, 'fleet-rate': 3_333, 'fleet-duration': 60 },
  ...{ 'fleet-warmup': 5, 'fleet-change': 1, 'fleet-connections': 32, 'notify-changes': 5_000 },
  ...{ 'notify-rate': 20, 'notify-seconds': 20, 'notify-rounds': 3, 'notify-concurrency': 8 },
  ...{ 'notify-batch': 100, 'soak-seconds': 60, 'soak-notifications': 20_000 },
};

const strings = { only: {}, 'node-options': {}, 'postgres-url': {}, compare: {}, ...DEFAULTS };
const flags = readFlags();

/** The options, or the list of them (with their defaults) on `--help` or an unknown option, and exit. */
function readFlags(): Record<string, string | undefined> {
  const options = Object.fromEntries(Object.keys(strings).map((name) => [name, { type: 'string' as const }]));
  try {
    const { values } = parseArgs({ options: { ...options, help: { type: 'boolean' } } });
    if (!values.help) return values as Record<string, string>;
  } catch (error) {
    console.error(`${(error as Error).message}\n`);
  }
  console.error(`usage: npm run bench -- [--<option> <value>] ... (docs/benchmarks.md)\n`);
  for (const name of Object.keys(strings))
    console.error(`  --${name} ${DEFAULTS[name as keyof typeof DEFAULTS] ?? ''}`);
  process.exit(2);
}

/** --only: the cases whose name contains it (and their anchors). */
export const only = flags.only;
/** --node-options: the service's (and the bench's worker processes') instead of `npm start`'s; '' for none. */
export const nodeOptionsFlag = flags['node-options']?.split(/\s+/).filter(Boolean);
export const postgresUrl = flags['postgres-url'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** --compare: a checkout of another commit, built, whose `serve` the notification section measures too. */
export const compareDir = flags.compare;

/** A numeric option: a whole number of at least `min` (0 < min < 1: a percentage above 0, at most 100). */
export function num(name: keyof typeof DEFAULTS, min = 1): number {
  const value = Number(flags[name] ?? DEFAULTS[name]);
  if (min > 0 && min < 1 ? value > 0 && value <= 100 : Number.isInteger(value) && value >= min) return value;
  throw new Error(`--${name} must be ${min > 0 && min < 1 ? 'a percentage > 0' : `a whole number ≥ ${min}`}`);
}
