import type { Kysely } from 'kysely';

/**
 * E-mail storm control: past the first few e-mail notifications of a user in a minute, the rest of that
 * minute's go out together in one digest, which each of them names.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('email_digests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('email_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('email_digests_user_window_idx')
    .on('email_digests')
    .columns(['user_id', 'window_start'])
    .unique()
    .execute();
  await db.schema.alterTable('notifications').addColumn('digest_id', 'text').execute();
  await db.schema.createIndex('notifications_digest_idx').on('notifications').column('digest_id').execute();
  await db.schema.createIndex('notifications_email_idx').on('notifications').column('email_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('notifications_email_idx').execute();
  await db.schema.dropIndex('notifications_digest_idx').execute();
  await db.schema.alterTable('notifications').dropColumn('digest_id').execute();
  await db.schema.dropTable('email_digests').execute();
}
