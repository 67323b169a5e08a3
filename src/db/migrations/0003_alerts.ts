import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The e-mail channel is a resource of its own (reference: alert channel {id, name: "Email"}), one per user.
  await db.schema
    .createTable('email_channels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().unique().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('alerts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('alert_me', 'text')
    .addColumn('duration_minutes', 'integer')
    .addColumn('include_child', 'integer', (c) => c.notNull())
    .addColumn('channel_type', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.references('webhooks.id'))
    .addColumn('email_channel_id', 'text', (c) => c.references('email_channels.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alerts_user_idx').on('alerts').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('alerts_webhook_idx').on('alerts').column('webhook_id').execute();
  await db.schema.createIndex('alerts_org_type_idx').on('alerts').columns(['org_id', 'type']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('alerts').execute();
  await db.schema.dropTable('email_channels').execute();
}
