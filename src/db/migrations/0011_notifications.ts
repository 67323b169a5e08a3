import type { Kysely } from 'kysely';

/**
 * Notifications (one per alert and event) and their webhook deliveries with every attempt
 * (docs/rules/webhooks.md#deliveries). A webhook keeps its own retry gate: after a failed request nothing
 * else goes to it before `retry_at`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // Not foreign keys: a notification outlives the alert that asked for it and the event (both pruned apart).
    .addColumn('alert_id', 'text', (c) => c.notNull())
    .addColumn('alert_name', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('condition', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('channel_type', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text')
    .addColumn('email_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('notifications_alert_event_idx')
    .on('notifications')
    .columns(['alert_id', 'event_id'])
    .unique()
    .execute();
  await db.schema
    .createIndex('notifications_user_idx')
    .on('notifications')
    .columns(['user_id', 'created_at'])
    .execute();
  await db.schema.createIndex('notifications_created_idx').on('notifications').column('created_at').execute();

  await db.schema
    .createTable('deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('notification_id', 'text', (c) =>
      c.notNull().references('notifications.id').onDelete('cascade'),
    )
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('deliveries_webhook_idx')
    .on('deliveries')
    .columns(['webhook_id', 'status', 'created_at'])
    .execute();
  await db.schema
    .createIndex('deliveries_notification_idx')
    .on('deliveries')
    .column('notification_id')
    .execute();

  await db.schema
    .createTable('delivery_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id').onDelete('cascade'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('failure', 'text')
    .addColumn('error', 'text')
    .addColumn('response', 'text')
    .execute();
  await db.schema
    .createIndex('delivery_attempts_delivery_idx')
    .on('delivery_attempts')
    .columns(['delivery_id', 'at'])
    .execute();

  await db.schema.alterTable('webhooks').addColumn('retry_at', 'bigint').execute();
  await db.schema.alterTable('webhooks').addColumn('last_failure_at', 'bigint').execute();
  await db.schema.alterTable('webhooks').addColumn('probe_until', 'bigint').execute();
  // Matching an event: the alerts of its type in its organization and those above it.
  await db.schema.createIndex('alerts_type_org_idx').on('alerts').columns(['type', 'org_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('alerts_type_org_idx').execute();
  for (const column of ['probe_until', 'last_failure_at', 'retry_at']) {
    await db.schema.alterTable('webhooks').dropColumn(column).execute();
  }
  await db.schema.dropTable('delivery_attempts').execute();
  await db.schema.dropTable('deliveries').execute();
  await db.schema.dropTable('notifications').execute();
}
