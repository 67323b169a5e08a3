import type { Kysely } from 'kysely';

/**
 * Recurring maintenance windows: the schedule (JSON text: frequency, days, start, duration_minutes,
 * timezone) and `until`. A recurring window keeps its whole span in starts_at and ends_at (its first
 * occurrence's start, its last one's end, or the latest instant when it has no until), so the index on
 * ends_at that finds the windows not over finds it too; which occurrence is open is worked out from the
 * schedule (features/silences/occurrences.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('silences').addColumn('recurrence', 'text').execute();
  await db.schema.alterTable('silences').addColumn('until', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('silences').dropColumn('until').execute();
  await db.schema.alterTable('silences').dropColumn('recurrence').execute();
}
