import type { Kysely } from 'kysely';

/**
 * An organization's notifications (`GET /api/v2/notification?scope=org`) are read by organization, newest
 * first: without this index an Operator of a small organization would have every notification scanned.
 * It costs each notification written one index entry more.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('notifications_org_idx')
    .on('notifications')
    .columns(['org_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('notifications_org_idx').execute();
}
