import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { naturalSortKey } from '../../features/fleet/nodes/name-sort.js';

const BATCH = 500;

/**
 * The node list's orders (`GET /api/v2/node?sort=`), each read from an index for its first page rather than
 * sorted over the whole fleet:
 * - `name_sort`: the name's natural-order key (features/fleet/nodes/name-sort.ts), compared byte by byte on
 *   both databases (PostgreSQL: collation "C", whatever the database's), filled in here for existing nodes;
 *   alone, after the state, and after the organization (a page by organization reads each one's slice).
 * - problems first is `node_state` descending (UNREACHABLE, NEW, ALIVE: the names sort in the order of
 *   health), then the longest silent first: the liveness sweep's index on `(node_state, last_seen_at)` is
 *   rebuilt in that shape, and serves the sweep as before. Never seen (null) counts as the longest silent;
 *   SQLite puts nulls first in an ascending index by itself, PostgreSQL is told to.
 * - `(org_id, node_state)`: the console's counts per state within an organization.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const nullsFirst = postgres ? sql` nulls first` : sql``;
  await db.schema
    .alterTable('nodes')
    .addColumn('name_sort', postgres ? sql`text collate "C"` : 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await backfill(db);
  await db.schema.createIndex('nodes_name_sort_idx').on('nodes').columns(['name_sort', 'id']).execute();
  await db.schema
    .createIndex('nodes_org_name_sort_idx')
    .on('nodes')
    .columns(['org_id', 'name_sort', 'id'])
    .execute();
  await db.schema
    .createIndex('nodes_state_name_idx')
    .on('nodes')
    .columns(['node_state', 'name_sort', 'id'])
    .execute();
  await db.schema
    .createIndex('nodes_last_seen_idx')
    .on('nodes')
    .expression(sql`last_seen_at${nullsFirst}, id`)
    .execute();
  await db.schema.dropIndex('nodes_state_seen_idx').execute();
  await db.schema
    .createIndex('nodes_problems_idx')
    .on('nodes')
    .expression(sql`node_state desc, last_seen_at${nullsFirst}, id`)
    .execute();
  await db.schema.createIndex('nodes_org_state_idx').on('nodes').columns(['org_id', 'node_state']).execute();
}

/** In batches by id, so a large fleet is never held in memory at once. */
async function backfill(db: Kysely<unknown>): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await sql<{ id: string; name: string }>`
      select id, name from nodes where id > ${after} order by id limit ${BATCH}`.execute(db);
    if (rows.length === 0) return;
    const keys = rows.map((row) => sql`(${row.id}, ${naturalSortKey(row.name)})`);
    await sql`update nodes set name_sort = keyed.column2
      from (values ${sql.join(keys)}) as keyed where nodes.id = keyed.column1`.execute(db);
    after = rows[rows.length - 1]!.id;
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of [
    'nodes_org_state_idx',
    'nodes_problems_idx',
    'nodes_last_seen_idx',
    'nodes_state_name_idx',
  ])
    await db.schema.dropIndex(index).execute();
  await db.schema.dropIndex('nodes_org_name_sort_idx').execute();
  await db.schema.dropIndex('nodes_name_sort_idx').execute();
  await db.schema
    .createIndex('nodes_state_seen_idx')
    .on('nodes')
    .columns(['node_state', 'last_seen_at'])
    .execute();
  await db.schema.alterTable('nodes').dropColumn('name_sort').execute();
}
