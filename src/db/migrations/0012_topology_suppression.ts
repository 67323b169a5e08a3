import type { Kysely } from 'kysely';

/**
 * Topology-aware suppression: a tunnel or service alert stays quiet while the node behind the change (or a
 * tunnel's peer) is UNREACHABLE, unless its owner turned that off. On by default, for existing alerts too.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('alerts')
    .addColumn('suppress_when_node_unreachable', 'integer', (column) => column.notNull().defaultTo(1))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('alerts').dropColumn('suppress_when_node_unreachable').execute();
}
