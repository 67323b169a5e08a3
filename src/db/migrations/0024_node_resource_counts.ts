import { PostgresAdapter, sql, type Kysely } from 'kysely';

const COUNTED = [
  ['tunnels_down', 'tunnels', 'state', 'CONNECTED'],
  ['services_down', 'services', 'status', 'HEALTHY'],
] as const;

/**
 * The node list's orders by its tunnels, its services and its software version (`GET /api/v2/node?sort=`),
 * each read from an index for its first page: a node's tunnels not CONNECTED and services not HEALTHY are
 * counted on the node itself, written where they change (features/fleet/reports/service.ts, and
 * resources/service.ts when one is forgotten), and filled in here for the nodes already stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [column, table, state, good] of COUNTED) {
    await db.schema
      .alterTable('nodes')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update nodes set ${sql.ref(column)} = (
      select count(*) from ${sql.table(table)} r
      where r.node_id = nodes.id and r.${sql.ref(state)} <> ${sql.lit(good)})`.execute(db);
    await db.schema
      .createIndex(`nodes_${column}_idx`)
      .on('nodes')
      .columns([column, 'name_sort', 'id'])
      .execute();
  }
  // Never reported (null) first, as the order has it: SQLite's ascending index does so by itself.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createIndex('nodes_version_idx')
    .on('nodes')
    .expression(sql`software_version${postgres ? sql` nulls first` : sql``}, name_sort, id`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('nodes_version_idx').execute();
  for (const [column] of COUNTED) {
    await db.schema.dropIndex(`nodes_${column}_idx`).execute();
    await db.schema.alterTable('nodes').dropColumn(column).execute();
  }
}
