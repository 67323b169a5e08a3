import { sql } from 'kysely';
import type { Db } from '../db/types.js';

/** How long a list of listening workers is used before it is read again. */
const REFRESH_MS = 2_000;

/**
 * The SQL for the start of the PostgreSQL session name of a worker's listening connection: the schema (hashed, as names are
 * limited to 63 bytes) and the worker, so that an enqueuing process can find the live workers of its schema
 * in `pg_stat_activity`; the worker's id follows. A connection leaves that view the moment it closes, so a killed worker drops out
 * without any heartbeat.
 */
export const LISTENER_NAME_PREFIX = `'edgewatch-jobs:' || left(md5(current_schema()), 8) || ':'`;

/**
 * Picks which listening worker a wake goes to, in turn. Every NOTIFY reaches every listener, and a woken
 * worker claims: with several workers, one claim takes the new jobs and the others come back empty, each a
 * round trip and a PostgreSQL transaction for nothing. Waking one worker in turn spreads the work as well
 * and claims once. With fewer than two workers known, or before the first read, wakes go to all.
 *
 * A worker that stopped in the last `REFRESH_MS` may still be picked; its jobs then wait for another
 * worker's poll, the same safety net as a lost notification.
 */
export class WakeTargets {
  private workers: string[] = [];
  private turn = 0;
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  constructor(private readonly db: Db) {}

  /** The worker to wake next, or undefined to wake them all. */
  next(): string | undefined {
    if (Date.now() - this.readAt > REFRESH_MS) void this.read();
    if (this.workers.length < 2) return undefined;
    this.turn = (this.turn + 1) % this.workers.length;
    return this.workers[this.turn];
  }

  /** Reads the listening workers of this schema again; their ids. */
  async read(): Promise<string[]> {
    this.reading ??= this.query().finally(() => {
      this.readAt = Date.now();
      this.reading = undefined;
    });
    await this.reading;
    return this.workers;
  }

  private async query(): Promise<void> {
    const prefix = sql.raw(LISTENER_NAME_PREFIX);
    try {
      const { rows } = await sql<{ name: string }>`
        select substr(application_name, length(${prefix}) + 1) as name from pg_stat_activity
        where datname = current_database() and starts_with(application_name, ${prefix})
        order by application_name`.execute(this.db);
      this.workers = rows.map((row) => row.name);
    } catch {
      this.workers = [];
    }
  }
}
