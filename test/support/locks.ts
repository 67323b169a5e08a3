import { sql } from 'kysely';
import { dialect } from './database.js';
import type { TestApp } from './harness.js';

/**
 * A transaction of the test that holds one row (PostgreSQL: FOR UPDATE; SQLite: its one writer, the whole
 * database) until released: what the service does meanwhile waits at that row, so a race can be forced.
 */
export async function holdRow(t: TestApp, table: 'nodes' | 'tunnels', id: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const done = t.ctx.db.transaction().execute(async (trx) => {
    const row = trx.selectFrom(table).select('id').where('id', '=', id);
    await (dialect === 'postgres' ? row.forUpdate() : row).execute();
    held();
    await released;
  });
  await holding;
  return async () => {
    release();
    await done;
  };
}

/** On PostgreSQL, until `count` statements wait for a lock; SQLite's one writer cannot be watched. */
export async function lockWaiters(t: TestApp, count: number): Promise<void> {
  if (dialect !== 'postgres') return new Promise((resolve) => setTimeout(resolve, 100));
  const blocked = sql<{ n: number }>`select count(*)::int as n from pg_locks where not granted`;
  for (let tries = 0; (await blocked.execute(t.ctx.db)).rows[0]!.n < count; tries += 1) {
    if (tries > 500) throw new Error(`fewer than ${count} statements waited for a lock`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
