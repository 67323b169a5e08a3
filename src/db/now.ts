import { sql, type RawBuilder } from 'kysely';
import { systemClock, type Clock } from '../lib/clock.js';
import { isPostgres } from './connect.js';
import { slot } from './prepared.js';
import type { Executor } from './types.js';

const DATABASE_CLOCK = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * "Now" as queues compare leases and due times with it (epoch ms). On PostgreSQL it is the server's clock,
 * so processes on several hosts, whose clocks differ, agree on when a lease has run out and never take a
 * live one. On SQLite one host runs everything, and a process running on a hand-set clock (tests) gets that
 * clock's time on either database.
 */
export function databaseNow(db: Executor, clock: Clock): RawBuilder<number> {
  return nowValue(preparedNow(db, clock));
}

/**
 * `databaseNow` for a query compiled once (db/prepared.ts): the same expression, with its value, when it
 * has one, in the slot `now`. `byDatabase` is part of the query's shape.
 */
export interface PreparedNow {
  byDatabase: boolean;
  now: number | undefined;
}

export function preparedNow(db: Executor, clock: Clock): PreparedNow {
  const byDatabase = isPostgres(db) && clock === systemClock;
  return { byDatabase, now: byDatabase ? undefined : clock.now() };
}

/** The expression of a `PreparedNow` with its value in it, for a query built anew. */
export function nowValue({ byDatabase, now }: PreparedNow): RawBuilder<number> {
  return byDatabase ? DATABASE_CLOCK : sql<number>`cast(${now} as bigint)`;
}

/** The expression `preparedNow` stands for, as its query is built. */
export function nowExpression(byDatabase: boolean): RawBuilder<number> {
  return byDatabase ? DATABASE_CLOCK : sql<number>`cast(${slot<number>('now')} as bigint)`;
}
