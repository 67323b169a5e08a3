import type { Kysely } from 'kysely';

/**
 * The fleet (docs/rules/alerts-and-fleet.md#fleet-model): nodes registered by operators, the tunnels and
 * services their agents report, and every change as an event, stored in the transaction of the change.
 * Timestamps are epoch ms.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('nodes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hardware_serial_number', 'text', (c) => c.unique())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('labels', 'text', (c) => c.notNull())
    .addColumn('max_headless_time', 'integer', (c) => c.notNull())
    .addColumn('node_state', 'text', (c) => c.notNull())
    .addColumn('state_since', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint')
    .addColumn('addresses', 'text', (c) => c.notNull())
    .addColumn('software_version', 'text')
    .addColumn('upgrade_status', 'text')
    .addColumn('cert_not_before', 'bigint')
    .addColumn('cert_not_after', 'bigint')
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('nodes_org_name_idx').on('nodes').columns(['org_id', 'name']).execute();
  // The liveness sweep reads the ALIVE nodes whose last report is older than the timeout.
  await db.schema
    .createIndex('nodes_state_seen_idx')
    .on('nodes')
    .columns(['node_state', 'last_seen_at'])
    .execute();

  // Labels again as rows, so `?label=key:value` is an indexed lookup on either database.
  await db.schema
    .createTable('node_labels')
    .addColumn('node_id', 'text', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('node_labels_pk', ['node_id', 'key'])
    .execute();
  await db.schema
    .createIndex('node_labels_key_value_idx')
    .on('node_labels')
    .columns(['key', 'value'])
    .execute();

  for (const [table, stateColumn] of [
    ['tunnels', 'state'],
    ['services', 'status'],
  ] as const) {
    let builder = db.schema
      .createTable(table)
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('node_id', 'text', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn(stateColumn, 'text', (c) => c.notNull())
      .addColumn('state_since', 'bigint', (c) => c.notNull())
      .addColumn('sequence', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull());
    if (table === 'tunnels') {
      builder = builder.addColumn('peer_node_id', 'text', (c) =>
        c.references('nodes.id').onDelete('set null'),
      );
    }
    await builder.execute();
    await db.schema
      .createIndex(`${table}_node_key_idx`)
      .on(table)
      .columns(['node_id', 'key'])
      .unique()
      .execute();
  }

  await db.schema
    .createTable('fleet_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('condition', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('resource_kind', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('resource_name', 'text', (c) => c.notNull())
    .addColumn('previous_state', 'text')
    .addColumn('current_state', 'text', (c) => c.notNull())
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('detected_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('fleet_events_org_idx')
    .on('fleet_events')
    .columns(['org_id', 'occurred_at'])
    .execute();
  await db.schema
    .createIndex('fleet_events_node_idx')
    .on('fleet_events')
    .columns(['node_id', 'occurred_at'])
    .execute();
  await db.schema.createIndex('fleet_events_time_idx').on('fleet_events').column('occurred_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('fleet_events').execute();
  await db.schema.dropTable('services').execute();
  await db.schema.dropTable('tunnels').execute();
  await db.schema.dropTable('node_labels').execute();
  await db.schema.dropTable('nodes').execute();
}
