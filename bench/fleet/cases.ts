export type FleetDatabase = 'sqlite' | 'postgres';

/** One fleet measurement; `--only <text>` picks those whose name contains it. */
export interface FleetCase {
  name: string;
  measure: 'reports' | 'sweep';
  database: FleetDatabase;
  /** API processes the reports are spread over (SQLite: the one process that also runs the worker). */
  apiProcesses: number;
  /** Goals checked with PASS/MISS; a case without goals reports its figures only. */
  goals?: {
    /** Achieved reports/s at least this fraction of the offered rate. */
    minAchievedRatio?: number;
    maxP99Ms?: number;
    /** Server CPU, in cores, over the measured window. */
    maxCores?: number;
    maxSweepMs?: number;
  };
}

/** The targets, shown as ratios beside every row (PostgreSQL's too, which has no goals). */
export const TARGETS = { p99Ms: 20, cores: 1, sweepMs: 100, achievedRatio: 0.99 } as const;

// In the order they run: each database's sweep right after its reports, on the same seeded database.
export const FLEET_CASES: FleetCase[] = [
  {
    name: 'fleet reports: SQLite, one process',
    measure: 'reports',
    database: 'sqlite',
    apiProcesses: 1,
    goals: { minAchievedRatio: TARGETS.achievedRatio, maxP99Ms: TARGETS.p99Ms, maxCores: TARGETS.cores },
  },
  {
    name: 'fleet sweep: SQLite',
    measure: 'sweep',
    database: 'sqlite',
    apiProcesses: 1,
    goals: { maxSweepMs: TARGETS.sweepMs },
  },
  {
    name: 'fleet reports: PostgreSQL, 2 API processes + 1 worker',
    measure: 'reports',
    database: 'postgres',
    apiProcesses: 2,
  },
  { name: 'fleet sweep: PostgreSQL', measure: 'sweep', database: 'postgres', apiProcesses: 0 },
];

export function selectFleetCases(only: string | undefined): FleetCase[] {
  if (only === undefined) return FLEET_CASES;
  const needle = only.toLowerCase();
  return FLEET_CASES.filter((c) => c.name.toLowerCase().includes(needle));
}
