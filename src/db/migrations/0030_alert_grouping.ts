import type { Kysely } from 'kysely';

/**
 * How an alert groups its notifications into incidents (docs/decisions/0008-incidents.md). Each column is
 * null until set, and null means the default of the alert's channel, so that an alert moved from a webhook
 * to Slack takes Slack's grouping unless its own was chosen.
 */
const COLUMNS = [
  ['group_by', 'text'],
  ['group_wait_s', 'integer'],
  ['group_interval_s', 'integer'],
  ['repeat_interval_s', 'integer'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, type] of COLUMNS) await db.schema.alterTable('alerts').addColumn(name, type).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name] of [...COLUMNS].reverse())
    await db.schema.alterTable('alerts').dropColumn(name).execute();
}
