import { sql, type Kysely } from 'kysely';

/**
 * The fleet's history (docs/rules/alerts-and-fleet.md#fleet-history): a snapshot of counts each minute.
 * `fleet_history_minutes` holds one row per minute a snapshot was taken, so a minute without one (the service
 * was down) is a gap, while an organization without a row in a taken minute had nothing to count (zeros).
 * `fleet_history` holds one row per organization with nodes, per minute. Times are epoch ms.
 *
 * The indexes keep each minute's count cheap at 100,000 nodes (docs/benchmarks.md#fleet-history): nodes by
 * organization and state are counted from an index alone (nodes_org_state_idx, made by 0021), and the tunnels and services away from their good
 * state are found through partial indexes that hold only those (few, and written only when a state changes).
 */
const UNHEALTHY = [
  ['tunnels', 'state', 'CONNECTED'],
  ['services', 'status', 'HEALTHY'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fleet_history_minutes')
    .addColumn('minute', 'bigint', (c) => c.primaryKey())
    .execute();
  await db.schema
    .createTable('fleet_history')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('minute', 'bigint', (c) => c.notNull())
    .addColumn('nodes_alive', 'integer', (c) => c.notNull())
    .addColumn('nodes_unreachable', 'integer', (c) => c.notNull())
    .addColumn('nodes_new', 'integer', (c) => c.notNull())
    .addColumn('tunnels_unhealthy', 'integer', (c) => c.notNull())
    .addColumn('tunnels_unknown', 'integer', (c) => c.notNull())
    .addColumn('services_unhealthy', 'integer', (c) => c.notNull())
    .addColumn('services_unknown', 'integer', (c) => c.notNull())
    // A second snapshot of the same minute (another worker, a retry) cannot add a second row.
    .addPrimaryKeyConstraint('fleet_history_pk', ['org_id', 'minute'])
    .execute();
  for (const [table, column, good] of UNHEALTHY) {
    await db.schema
      .createIndex(`${table}_unhealthy_idx`)
      .on(table)
      .column('node_id')
      .where(sql.ref(column), '<>', sql.lit(good))
      .execute();
  }
  // The retention task deletes by minute across organizations.
  await db.schema.createIndex('fleet_history_minute_idx').on('fleet_history').column('minute').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table] of UNHEALTHY) await db.schema.dropIndex(`${table}_unhealthy_idx`).execute();
  await db.schema.dropTable('fleet_history').execute();
  await db.schema.dropTable('fleet_history_minutes').execute();
}
