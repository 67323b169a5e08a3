import { sql, type Kysely } from 'kysely';

/**
 * Deliveries become their own queue (docs/decisions/0005-deliveries-are-their-own-queue.md): a pending
 * delivery is due at `next_attempt_at` and, while a request for it is in flight, leased until
 * `lease_until`; `attempts` counts its claims and fences the writes of each. A retry the owner asks for
 * (`retry_requested`) is the webhook's next request even while its retry gate is closed. A probe is now
 * simply the one request in flight while a webhook is failing, so `probe_until` goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('lease_until', 'bigint').execute();
  await db.schema
    .alterTable('deliveries')
    .addColumn('retry_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('deliveries_due_idx')
    .on('deliveries')
    .columns(['status', 'next_attempt_at', 'webhook_id'])
    .execute();
  await db.schema
    .createIndex('deliveries_webhook_due_idx')
    .on('deliveries')
    .columns(['webhook_id', 'status', 'next_attempt_at', 'id'])
    .execute();
  // The requests in flight per webhook are counted at every claim: only leased rows, never the history.
  await db.schema
    .createIndex('deliveries_leased_idx')
    .on('deliveries')
    .columns(['webhook_id', 'lease_until'])
    .where(sql.ref('lease_until'), 'is not', null)
    .execute();
  await db.schema.alterTable('webhooks').dropColumn('probe_until').execute();
  // Pending deliveries left by the job kind that sent them before: their jobs go, the rows are the queue,
  // each due no later than it was made.
  await sql`delete from jobs where kind = 'webhook.deliver'`.execute(db);
  await sql`update deliveries set next_attempt_at = created_at
    where status = 'pending' and next_attempt_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('probe_until', 'bigint').execute();
  await db.schema.dropIndex('deliveries_leased_idx').execute();
  await db.schema.dropIndex('deliveries_webhook_due_idx').execute();
  await db.schema.dropIndex('deliveries_due_idx').execute();
  await db.schema.alterTable('deliveries').dropColumn('retry_requested').execute();
  await db.schema.alterTable('deliveries').dropColumn('lease_until').execute();
}
