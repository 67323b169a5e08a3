import type { Kysely } from 'kysely';

/**
 * What a node's agent last reported, per section, as digests: a report whose sections all match is a pure
 * heartbeat and skips the transaction (cheap heartbeats, docs/ARCHITECTURE.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('nodes').addColumn('report_digest', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('nodes').dropColumn('report_digest').execute();
}
