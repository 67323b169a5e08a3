import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * One number that moves whenever what events are matched against changes: an alert, a maintenance window,
 * or whether a webhook is enabled (written, deleted, or removed by a cascade, from any process). Each
 * process keeps those rows in memory and reads them again only when the number moved
 * (features/notifications/matching-snapshot.ts), so an event no longer reads them itself.
 */
const onPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

/** The writes that change what is matched, per table. */
const WATCHED = [
  ['alerts', ['insert', 'update', 'delete']],
  ['silences', ['insert', 'update', 'delete']],
  ['webhooks', ['update of is_enabled', 'delete']],
] as const;

const triggerName = (table: string, event: string) => `${table}_${event.split(' ')[0]}_matching`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('matching_version')
    .addColumn('id', 'integer', (col) => col.primaryKey())
    .addColumn('version', 'bigint', (col) => col.notNull())
    .execute();
  await sql`insert into matching_version (id, version) values (1, 1)`.execute(db);
  if (onPostgres(db)) {
    await sql`
      create function matching_changed() returns trigger language plpgsql as $$
      begin
        update matching_version set version = version + 1 where id = 1;
        return null;
      end $$`.execute(db);
  }
  for (const [table, events] of WATCHED) {
    for (const event of events) {
      const name = sql.raw(triggerName(table, event));
      const when = sql.raw(`after ${event} on ${table}`);
      await (
        onPostgres(db)
          ? sql`create trigger ${name} ${when} for each statement execute function matching_changed()`
          : sql`create trigger ${name} ${when} for each row
            begin update matching_version set version = version + 1 where id = 1; end`
      ).execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table, events] of WATCHED) {
    for (const event of events) {
      const name = sql.raw(triggerName(table, event));
      await (
        onPostgres(db) ? sql`drop trigger ${name} on ${sql.raw(table)}` : sql`drop trigger ${name}`
      ).execute(db);
    }
  }
  if (onPostgres(db)) await sql`drop function matching_changed()`.execute(db);
  await db.schema.dropTable('matching_version').execute();
}
