import { sql, type Kysely } from 'kysely';

/**
 * A claim now reads each ready webhook's pending deliveries oldest first along deliveries_webhook_idx
 * (webhook_id, status, created_at) of 0011, so the two due-time indexes of 0017 only slowed every write.
 * The retries their owners asked for are few, and looked for at every claim of their webhook: a partial
 * index finds them without reading the rest.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_due_idx').execute();
  await db.schema.dropIndex('deliveries_webhook_due_idx').execute();
  await db.schema
    .createIndex('deliveries_asked_idx')
    .on('deliveries')
    .columns(['webhook_id', 'status', 'created_at', 'id'])
    .where(sql.ref('retry_requested'), '=', sql.lit(1))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_asked_idx').execute();
  await db.schema
    .createIndex('deliveries_webhook_due_idx')
    .on('deliveries')
    .columns(['webhook_id', 'status', 'next_attempt_at', 'id'])
    .execute();
  await db.schema
    .createIndex('deliveries_due_idx')
    .on('deliveries')
    .columns(['status', 'next_attempt_at', 'webhook_id'])
    .execute();
}
