import { PostgresAdapter, sql, type Kysely } from 'kysely';

const COUNTED = [
  ['tunnels_down', 'tunnels', 'state', 'CONNECTED'],
  ['services_down', 'services', 'status', 'HEALTHY'],
] as const;

/**
 * The node list's orders by its tunnels and its services (`GET /api/v2/node?sort=`): a node's tunnels not
 * CONNECTED and services not HEALTHY are counted on the node itself, written where they change
 * (features/fleet/reports/service.ts, and resources/service.ts when one is forgotten), and filled in here for
 * the nodes already stored.
 *
 * On SQLite these orders and the version's are read from indexes (a sort of the fleet takes up to 190 ms at
 * 100,000 nodes; the indexes cost its reports nothing measurable). On PostgreSQL they are not: each heartbeat
 * writes a new version of its node's row into every index on nodes, and three more took the fleet bench from
 * keeping up to falling behind, while a top-25 sort there stays under 100 ms (docs/benchmarks.md, "Node list").
 */
const INDEXES = [
  ['nodes_tunnels_down_idx', ['tunnels_down', 'name_sort', 'id']],
  ['nodes_services_down_idx', ['services_down', 'name_sort', 'id']],
  ['nodes_version_idx', ['software_version', 'name_sort', 'id']],
] as const;

const onPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [column, table, state, good] of COUNTED) {
    await db.schema
      .alterTable('nodes')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update nodes set ${sql.ref(column)} = (
      select count(*) from ${sql.table(table)} r
      where r.node_id = nodes.id and r.${sql.ref(state)} <> ${sql.lit(good)})`.execute(db);
  }
  if (onPostgres(db)) return;
  for (const [name, columns] of INDEXES)
    await db.schema
      .createIndex(name)
      .on('nodes')
      .columns([...columns])
      .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!onPostgres(db)) for (const [name] of INDEXES) await db.schema.dropIndex(name).execute();
  for (const [column] of COUNTED) await db.schema.alterTable('nodes').dropColumn(column).execute();
}
