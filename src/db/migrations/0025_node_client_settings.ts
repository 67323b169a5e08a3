import type { Kysely } from 'kysely';

/**
 * What the published client sends with a new node and edgewatch does not model (its profile and statistics
 * mode), kept as given and answered back in the node's metadata (docs/rules/alerts-and-fleet.md#fleet-model).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('nodes').addColumn('client_settings', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('nodes').dropColumn('client_settings').execute();
}
