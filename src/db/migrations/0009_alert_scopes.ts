import type { Kysely } from 'kysely';

const SCOPES = [
  ['scope_node_id', 'alerts_scope_node_idx'],
  ['scope_tunnel_id', 'alerts_scope_tunnel_idx'],
  ['scope_service_id', 'alerts_scope_service_idx'],
] as const;

/**
 * Alert scopes (docs/rules/alerts-and-fleet.md#scopes): an alert may watch one node (with its tunnels and
 * services), one tunnel or one service. No foreign keys: removing a scoped resource is refused or takes its
 * alerts explicitly, and the indexes serve both that lookup and matching events to alerts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [column, index] of SCOPES) {
    await db.schema.alterTable('alerts').addColumn(column, 'text').execute();
    await db.schema.createIndex(index).on('alerts').column(column).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [column, index] of SCOPES) {
    await db.schema.dropIndex(index).execute();
    await db.schema.alterTable('alerts').dropColumn(column).execute();
  }
}
