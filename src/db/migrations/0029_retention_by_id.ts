/**
 * `fleet_events_time_idx` and `notifications_created_idx` served one query each, the hourly retention task,
 * and were written with every event and every notification. Both tables' ids are UUIDv7s of the time a row
 * was made, so the task now finds what it removes by a range on the primary key. Every other query of these
 * tables is by organization, user, node or alert, and has its own index (docs/benchmarks.md#what-a-notification-writes).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('fleet_events_time_idx').execute();
  await db.schema.dropIndex('notifications_created_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('fleet_events_time_idx').on('fleet_events').column('occurred_at').execute();
  await db.schema.createIndex('notifications_created_idx').on('notifications').column('created_at').execute();
}
