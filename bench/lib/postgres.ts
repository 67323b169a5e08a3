// PostgreSQL for the sections that use it: whether the server answers, a database of the run's own (dropped
// afterwards, also on Ctrl-C), and what its backends cost.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { redactUrl } from '../../src/observability/logger.js';
import { cpuTimeMs, PROJECT_ROOT } from './processes.js';
import { skippedChecks, type Case, type SectionResult as Result } from './report.js';

async function query<R extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

type PgCase = Case & { database?: string };

/** All the cases when PostgreSQL answers (its settings and `note` printed), else a SKIP for each on it. */
export async function runnable<C extends PgCase>(cases: C[], url: string, out: Result, note: string) {
  if (!cases.some((c) => c.database === 'postgres')) return cases;
  try {
    const sql =
      "select name, setting from pg_settings where name = any('{server_version,autovacuum,synchronous_commit,fsync}')";
    const s = Object.fromEntries(
      (await query<{ name: string; setting: string }>(url, sql)).map((x) => [x.name, x.setting]),
    );
    const settings = `autovacuum ${s.autovacuum}, synchronous_commit ${s.synchronous_commit}, fsync ${s.fsync}`;
    out.output.push(`PostgreSQL ${s.server_version} at ${redactUrl(url)} (${settings}); ${note}`);
    return cases;
  } catch (error) {
    out.output.push(`PostgreSQL at ${redactUrl(url)} did not answer (${String(error)})`);
    const skipped = cases.filter((c) => c.database === 'postgres');
    const names = skipped.filter((c) => !c.anchor).map((c) => c.name);
    out.checks.push(...skippedChecks(names, 'not measured: PostgreSQL did not answer'));
    return cases.filter((c) => !skipped.includes(c));
  }
}

/** What autovacuum would have done between two rounds (the server here may run without it). */
export const vacuumAnalyze = (url: string) => query(url, 'vacuum analyze');

export interface BenchDatabase {
  name: string;
  url: string;
  /** A fresh schema in it: a reused table would carry the previous measurement's dead rows. */
  createSchema(prefix: string): Promise<{ name: string; drop: () => Promise<unknown> }>;
  drop: () => Promise<void>;
}

/** `with (force)`: a worker process that was killed may leave a connection behind for a moment. */
export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `edgewatch_bench_${randomBytes(5).toString('hex')}`;
  const dropSql = `drop database if exists ${name} with (force)`;
  await query(adminUrl, `create database ${name}`);
  // A runner stopped before it could drop the database makes a last, synchronous attempt on its way out.
  const dropOnExit = () => {
    const script = `const c = new (require('pg').Client)(process.argv[1]);
      c.connect().then(() => c.query(process.argv[2])).finally(() => c.end());`;
    spawnSync(process.execPath, ['-e', script, adminUrl, dropSql], { cwd: PROJECT_ROOT, timeout: 10_000 });
  };
  process.once('exit', dropOnExit);
  const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  let schemas = 0;
  return {
    name,
    url,
    async createSchema(prefix) {
      const schema = `${prefix}_${(schemas += 1)}`;
      await query(url, `create schema ${schema}`);
      return { name: schema, drop: () => query(url, `drop schema ${schema} cascade`) };
    },
    async drop() {
      await query(adminUrl, dropSql);
      process.removeListener('exit', dropOnExit);
    },
  };
}

/** CPU ms so far of each backend serving `database`, by pid; undefined when the server is not on this machine. */
export async function databaseCpuMs(url: string, database: string): Promise<Map<number, number> | undefined> {
  const sql = 'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()';
  const times = new Map<number, number>();
  for (const { pid } of await query<{ pid: number }>(url, sql, [database])) {
    const stat = fs.existsSync(`/proc/${pid}/stat`) ? fs.readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
    if (stat !== '' && !stat.includes('(postgres)')) return undefined;
    const ms = cpuTimeMs(pid);
    if (ms !== undefined) times.set(pid, ms);
  }
  return times.size === 0 ? undefined : times;
}

/** CPU ms between two readings; processes that appeared meanwhile count from zero. */
export function cpuBetween(before: Map<number, number> | undefined, after: Map<number, number> | undefined) {
  if (before === undefined || after === undefined) return undefined;
  return [...after].reduce((total, [pid, ms]) => total + ms - (before.get(pid) ?? 0), 0);
}

/** What a stretch of work wrote: commits and rows in its database, and WAL bytes in the whole server. */
export type WriteCounters = { commits: number; rows: number; walBytes: number };

/** The counters a second from now (a backend reports its counts up to a second after it goes idle). */
export async function writeCounters(url: string, database: string): Promise<WriteCounters> {
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const sql =
    'select xact_commit as commits, tup_inserted + tup_updated + tup_deleted as rows, ' +
    `pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') as "walBytes" from pg_stat_database where datname = $1`;
  const [row] = await query<Record<keyof WriteCounters, string>>(url, sql, [database]);
  return { commits: Number(row?.commits), rows: Number(row?.rows), walBytes: Number(row?.walBytes) };
}
