import type { Kysely } from 'kysely';

/**
 * A delivery's successful request is kept on its row, not as a row of `delivery_attempts`: most deliveries
 * succeed at their first request, and each then wrote a table and two indexes for its log alone. Set only by
 * a success and emptied into the log when the delivery is sent again (a replay), these two columns mark a
 * success the log reads from the row (features/deliveries/log-repo.ts attemptsOf).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('success_duration_ms', 'integer').execute();
  await db.schema.alterTable('deliveries').addColumn('success_response', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('deliveries').dropColumn('success_response').execute();
  await db.schema.alterTable('deliveries').dropColumn('success_duration_ms').execute();
}
