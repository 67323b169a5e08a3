import type { Kysely } from 'kysely';

/** The age of the oldest pending delivery, read at every metrics scrape, from an index rather than a scan. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('deliveries_status_idx')
    .on('deliveries')
    .columns(['status', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_status_idx').execute();
}
