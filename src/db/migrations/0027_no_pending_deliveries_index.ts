import { sql, type Kysely } from 'kysely';

/**
 * Every delivery entered and left the partial index of pending deliveries, for one gauge (the oldest pending
 * delivery's age) read at each scrape. The gauge now takes each webhook's oldest pending delivery from
 * `deliveries_webhook_idx` (webhook_id, status, created_at), one seek per webhook, and a delivery writes
 * one B-tree fewer when it is made and when it is delivered.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_pending_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('deliveries_pending_idx')
    .on('deliveries')
    .column('created_at')
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
}
