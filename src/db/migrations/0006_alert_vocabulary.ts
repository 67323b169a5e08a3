import { sql, type Kysely } from 'kysely';

// The vocabulary as it stood when this migration was written; later changes get migrations of their own.
const ALL_CONDITIONS: Record<string, string> = {
  NODE_STATE_CHANGE: 'ALIVE,UNREACHABLE',
  TUNNEL_STATE_CHANGE: 'CONNECTED,TERMINATED',
  SERVICE_STATE_CHANGE: 'HEALTHY,UNHEALTHY,TERMINATED',
  NODE_IP_CHANGE: 'PRIVATE_IP,PUBLIC_IP',
  CERT_EXPIRY: '80,100',
  HEADLESS_EXPIRY: '80,100',
  NODE_UPGRADE: 'ENABLED,DISABLED,SUCCESSFUL,FAILED',
};

/**
 * The product's own alert vocabulary (docs/rules/alerts-and-fleet.md#conditions): a tunnel that went down is
 * TERMINATED, not DISCONNECTED, and every type has conditions, all of them when an alert named none. Cached
 * alert lists are invalidated by bumping every user's subscriptions version.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update alerts set alert_me = replace(alert_me, 'DISCONNECTED', 'TERMINATED')
            where type = 'TUNNEL_STATE_CHANGE' and alert_me is not null`.execute(db);
  for (const [type, conditions] of Object.entries(ALL_CONDITIONS)) {
    await sql`update alerts set alert_me = ${conditions} where type = ${type} and alert_me is null`.execute(
      db,
    );
  }
  await sql`update users set subscriptions_version = subscriptions_version + 1`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`update alerts set alert_me = replace(alert_me, 'TERMINATED', 'DISCONNECTED')
            where type = 'TUNNEL_STATE_CHANGE'`.execute(db);
}
