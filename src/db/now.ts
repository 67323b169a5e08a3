import { sql, type RawBuilder } from 'kysely';
import { systemClock, type Clock } from '../lib/clock.js';
import { isPostgres } from './connect.js';
import type { Executor } from './types.js';

/**
 * "Now" as queues compare leases and due times with it (epoch ms). On PostgreSQL it is the server's clock,
 * so processes on several hosts, whose clocks differ, agree on when a lease has run out and never take a
 * live one. On SQLite one host runs everything, and a process running on a hand-set clock (tests) gets that
 * clock's time on either database.
 */
export function databaseNow(db: Executor, clock: Clock): RawBuilder<number> {
  if (isPostgres(db) && clock === systemClock) {
    return sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;
  }
  return sql<number>`cast(${clock.now()} as bigint)`;
}
