import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import {
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  SqliteDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import type { DatabaseTarget } from '../config.js';
import { setBounded } from '../lib/bounded-map.js';
import type { Database, Db, Executor } from './types.js';

const INT8_OID = 20;

// Epoch-ms timestamps are bigint columns; they fit a JS number exactly, so read them as numbers.
const typeParser = ((oid: number, format?: 'text') =>
  oid === INT8_OID
    ? Number
    : (pg.types.getTypeParser(oid, format) as unknown)) as typeof pg.types.getTypeParser;

const STATEMENT_CACHE_SIZE = 500;

/** SQLite's page cache at most (64 MiB), and the part of the file read through a memory map (256 MiB). */
const SQLITE_CACHE_KIB = 65_536;
const SQLITE_MMAP_BYTES = 268_435_456;

/**
 * Kysely begins every transaction DEFERRED: it reads first and takes the write lock at its first write. Another
 * connection (the heartbeat writer's thread, a CLI command) that commits in between would leave it unable
 * to write at all (SQLITE_BUSY_SNAPSHOT, which no waiting cures). IMMEDIATE takes the lock at the start,
 * waiting for it there (busy_timeout).
 */
const BEGIN_IMMEDIATE = 'begin immediate';

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs about as much as running a small
 * query, so statements are kept by their SQL text (bounded, oldest dropped first). Reuse is safe: the
 * driver runs one query at a time on its single connection and never leaves an iterator open here.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = sqlite.prepare(sql === 'begin' ? BEGIN_IMMEDIATE : sql);
        setBounded(statements, sql, statement, STATEMENT_CACHE_SIZE);
      }
      return statement;
    },
  };
}

/** Distinct statements prepared by name at most; further ones are sent unnamed, as before. */
const NAMED_STATEMENTS = 1_000;
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;
const CACHED_PLAN_CHANGED = '0A000';

/**
 * PostgreSQL parses and plans an unnamed statement at every execution; a named one is prepared once per
 * connection and then only bound and run (a quarter less per statement here, and less server CPU). Kysely
 * sends every query unnamed, so the pool it is given names each distinct data statement by its SQL text.
 * A schema change under a running process can invalidate a prepared plan: that statement is then renamed
 * (prepared afresh) and run again.
 */
function withPreparedStatements(pool: pg.Pool, onError: (error: Error) => void): PostgresPool {
  const names = new Map<string, string>();
  let issued = 0;
  const nameOf = (sql: string): string | undefined => {
    let name = names.get(sql);
    if (name === undefined && names.size < NAMED_STATEMENTS && PREPARABLE.test(sql)) {
      name = `ew_${(issued += 1)}`;
      names.set(sql, name);
    }
    return name;
  };
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => ({
    query: ((query: unknown, values?: unknown[]) => {
      if (typeof query !== 'string') return client.query(query as pg.Submittable);
      const run = (name: string | undefined) =>
        client.query({ text: query, values, ...(name === undefined ? {} : { name }) });
      const name = nameOf(query);
      if (name === undefined) return run(undefined);
      return run(name).catch((error: unknown) => {
        if ((error as { code?: unknown }).code !== CACHED_PLAN_CHANGED) throw error;
        names.delete(query);
        return run(nameOf(query));
      });
    }) as unknown as PostgresPoolClient['query'],
    release: () => client.release(),
  });
  return {
    async connect() {
      const client = await pool.connect();
      let wrapped = clients.get(client);
      if (wrapped === undefined) {
        // A connection lost while checked out between two queries is an 'error' event on its client,
        // which would end the process; the next query on it fails instead, and the pool drops it.
        client.on('error', onError);
        clients.set(client, (wrapped = wrap(client)));
      }
      return wrapped;
    },
    end: () => pool.end(),
  };
}

const sqliteHandles = new WeakMap<Executor, SQLite.Database>();

/**
 * The embedded database's handle when a read may run on it synchronously, skipping the driver's
 * queue: only for the database itself (not a transaction object) and only while no transaction is
 * open on the connection, so the read sees committed data only. Undefined otherwise (PostgreSQL
 * included), and the caller goes through Kysely.
 */
export function idleSqlite(db: Executor): SQLite.Database | undefined {
  const handle = sqliteHandles.get(db);
  return handle !== undefined && !handle.inTransaction ? handle : undefined;
}

/** The file of an embedded database kept in one (not in memory); undefined otherwise. */
export function sqliteFile(db: Db): string | undefined {
  const handle = sqliteHandles.get(db);
  return handle === undefined || handle.memory ? undefined : handle.name;
}

export interface ConnectOptions {
  /** PostgreSQL only: every unqualified table lives in this schema (tests use one schema per run). */
  schema?: string;
  poolSize?: number;
  /** Told of connections the server dropped (PostgreSQL): a restart, a failover. */
  onIdleError?: (error: Error) => void;
}

export function connectDatabase(target: DatabaseTarget, options: ConnectOptions = {}): Db {
  if (target.kind === 'sqlite') {
    if (target.file !== ':memory:') fs.mkdirSync(path.dirname(target.file), { recursive: true });
    const sqlite = new SQLite(target.file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('synchronous = NORMAL');
    // A group commit's savepoints keep the pages their units change in a sub-journal; past 64 KiB SQLite
    // moves it to a temporary file, which made every report's writes markedly slower.
    sqlite.pragma('temp_store = MEMORY');
    // SQLite's default page cache is 2 MB: a fleet of 100,000 nodes outgrows it in its token index alone, and
    // every report then read its pages again through system calls. The cache grows only as pages are read;
    // mapped pages are the operating system's page cache, read without a copy.
    sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
    sqlite.pragma(`mmap_size = ${SQLITE_MMAP_BYTES}`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
    sqliteHandles.set(db, sqlite);
    return db;
  }
  const pool = new pg.Pool({
    connectionString: target.url,
    max: options.poolSize ?? 10,
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
    types: { getTypeParser: typeParser },
  });
  // An idle connection the server dropped (a restart, a failover) is an 'error' event on the pool, which
  // would end the process unheard; the pool has already discarded it and opens a new one when needed.
  const onError = (error: Error) => options.onIdleError?.(error);
  pool.on('error', onError);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: withPreparedStatements(pool, onError) }),
  });
  pgPools.set(db, pool);
  return db;
}

const pgPools = new WeakMap<Executor, pg.Pool>();

/**
 * PostgreSQL: a connection of the database's own pool (same server, same schema) held apart from the
 * query pool, for a session that must stay open (LISTEN). Undefined on SQLite. Release it when done.
 */
export async function dedicatedConnection(db: Db): Promise<pg.PoolClient | undefined> {
  return pgPools.get(db)?.connect();
}

export function isPostgres(db: Executor): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * A transaction PostgreSQL aborted to resolve a conflict with others (a deadlock, or a serialization
 * failure): nothing of it was written, and the same work run again may well succeed.
 */
export function isTransientConflict(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '40P01' || code === '40001';
}

/** Unique-constraint violations of either driver, for turning races into 409s. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
