import type { Kysely } from 'kysely';

/**
 * Maintenance windows: while one covers an event's organization (and node, and type), the notifications
 * it would cause are stored as suppressed with the window's id; at its end, what still holds is sent.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('silences')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('include_child', 'integer', (c) => c.notNull())
    // Not a foreign key: a window outlives a node deleted during the work, as the record of it.
    .addColumn('node_id', 'text')
    /** Comma-separated notification types; null for all. */
    .addColumn('types', 'text')
    .addColumn('starts_at', 'bigint', (c) => c.notNull())
    .addColumn('ends_at', 'bigint', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('silences_ends_idx').on('silences').column('ends_at').execute();
  await db.schema.createIndex('silences_org_idx').on('silences').columns(['org_id', 'starts_at']).execute();
  await db.schema.alterTable('notifications').addColumn('silence_id', 'text').execute();
  await db.schema.createIndex('notifications_silence_idx').on('notifications').column('silence_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('notifications_silence_idx').execute();
  await db.schema.alterTable('notifications').dropColumn('silence_id').execute();
  await db.schema.dropTable('silences').execute();
}
