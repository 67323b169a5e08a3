import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import { cpuTimeMs } from '../lib/processes.js';
import { PROJECT_ROOT } from '../targets.js';

export interface PostgresServer {
  version: string;
  /** Settings that move queue figures, as the server reports them. */
  settings: Record<string, string>;
}

/** Connects once to see whether PostgreSQL answers; the reason when it does not. */
export async function probePostgres(url: string): Promise<PostgresServer | { error: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string; setting: string }>(
      `select name, setting from pg_settings
        where name in ('server_version', 'autovacuum', 'synchronous_commit', 'fsync', 'shared_buffers')`,
    );
    const settings = Object.fromEntries(rows.map((row) => [row.name, row.setting]));
    const { server_version: version = 'unknown', ...rest } = settings;
    return { version, settings: rest };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** What autovacuum would have done between two rounds (the server here may run without it). */
export async function vacuumAnalyze(url: string): Promise<void> {
  await adminQuery(url, 'vacuum analyze');
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export interface BenchDatabase {
  name: string;
  url: string;
  /** A fresh schema in it, dropped by `drop`. */
  createSchema(prefix: string): Promise<{ name: string; drop(): Promise<void> }>;
  drop(): Promise<void>;
}

/**
 * A database of its own for this run, dropped afterwards (`with (force)`: a worker process that was killed may
 * leave a connection behind for a moment). If the runner is stopped before it can drop it, a last synchronous
 * attempt is made on the way out.
 */
export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `edgewatch_bench_${randomBytes(5).toString('hex')}`;
  await adminQuery(adminUrl, `create database ${name}`);
  let dropped = false;
  const dropOnExit = () => {
    if (dropped) return;
    const script =
      `const pg = require('pg'); const c = new pg.Client({ connectionString: process.argv[1] });` +
      `c.connect().then(() => c.query('drop database if exists ${name} with (force)')).finally(() => c.end());`;
    spawnSync(process.execPath, ['-e', script, adminUrl], {
      cwd: PROJECT_ROOT,
      stdio: 'ignore',
      timeout: 10_000,
    });
  };
  process.once('exit', dropOnExit);
  const url = withDatabase(adminUrl, name);
  let schemas = 0;
  return {
    name,
    url,
    async createSchema(prefix) {
      schemas += 1;
      const schema = `${prefix}_${schemas}`;
      await adminQuery(url, `create schema ${schema}`);
      return { name: schema, drop: () => adminQuery(url, `drop schema ${schema} cascade`) };
    },
    async drop() {
      await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
      dropped = true;
      process.removeListener('exit', dropOnExit);
    },
  };
}

/**
 * CPU time (ms) used so far by the server processes serving `database`, read from /proc by their pids:
 * undefined when the server is not on this machine (a pid that is another process here, or none is here).
 */
export async function databaseCpuMs(url: string, database: string): Promise<Map<number, number> | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database],
    );
    const times = new Map<number, number>();
    for (const { pid } of rows) {
      const kind = processKind(pid);
      if (kind === 'other') return undefined;
      // A backend whose connection closed since the query is gone from /proc: it is skipped.
      const ms = kind === 'postgres' ? cpuTimeMs(pid) : undefined;
      if (ms !== undefined) times.set(pid, ms);
    }
    return rows.length > 0 && times.size === 0 ? undefined : times;
  } finally {
    await client.end();
  }
}

/** Transactions committed in `database` so far; backends report theirs up to a second after they go idle. */
export async function committedTransactions(url: string, database: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ commits: string }>(
      'select xact_commit as commits from pg_stat_database where datname = $1',
      [database],
    );
    return Number(rows[0]?.commits ?? 0);
  } finally {
    await client.end();
  }
}

/** Connections open on the whole server, and how many it allows. */
export async function connectionsInUse(url: string): Promise<{ used: number; max: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ used: string; max: string }>(
      "select count(*) as used, current_setting('max_connections') as max from pg_stat_activity " +
        "where backend_type = 'client backend'",
    );
    return { used: Number(rows[0]?.used ?? 0), max: Number(rows[0]?.max ?? 0) };
  } finally {
    await client.end();
  }
}

function processKind(pid: number): 'postgres' | 'other' | 'gone' {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(postgres)') ? 'postgres' : 'other';
  } catch {
    return 'gone';
  }
}

/** CPU ms the server spent between two readings; processes that appeared meanwhile count from zero. */
export function cpuBetween(
  before: Map<number, number> | undefined,
  after: Map<number, number> | undefined,
): number | undefined {
  if (before === undefined || after === undefined) return undefined;
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}
