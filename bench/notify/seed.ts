// The section's database: fresh, migrated by the service's own code, its organization and admin made by the
// service's bootstrap (with the key the runner then uses), and the nodes written straight in, ALIVE, each with
// one CONNECTED tunnel. A node's report that names its tunnel in the other state is then exactly one
// TUNNEL_STATE_CHANGE event, which the one alert turns into one notification.
import { randomBytes } from 'node:crypto';
import type { Insertable } from 'kysely';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import type { NodesTable } from '../../src/db/types.js';
import { bootstrap } from '../../src/features/bootstrap/service.js';
import { insertResources, type NewResource } from '../../src/features/fleet/resources-repo.js';
import { newId } from '../../src/lib/ids.js';
import { sha256Hex } from '../../src/lib/tokens.js';
import { createLogger } from '../../src/observability/logger.js';
import { closeContext, openContext } from '../../src/runtime.js';

const BATCH = 500;
export const TUNNEL = { key: 'uplink', name: 'Uplink' } as const;
const SEEDED_STATE = 'CONNECTED';

/** The nodes' credentials and names; node i reports as `token(i)`. */
export const nodeToken = (i: number) => `ewn_notify_${String(i).padStart(7, '0')}`;
export const nodeName = (i: number) => `notify-node-${i}`;

/** The report that moves node i's tunnel away from its state after `flips` earlier changes. */
export function reportBody(flips: number): string {
  const state = flips % 2 === 0 ? 'TERMINATED' : 'CONNECTED';
  return JSON.stringify({ tunnels: [{ ...TUNNEL, state }] });
}

export interface SeededDatabase {
  /** DATABASE_URL for the service. */
  url: string;
  secretKey: string;
  adminKey: string;
  nodes: number;
  ms: number;
}

/** Migrates and seeds `nodes` nodes into the database at `url` (a sqlite: path or a fresh PostgreSQL one). */
export async function seedDatabase(url: string, nodes: number): Promise<SeededDatabase> {
  const started = performance.now();
  const secretKey = randomBytes(32).toString('hex');
  const adminKey = `ew_bench_${randomBytes(32).toString('base64url')}`;
  const config = loadConfig({ DATABASE_URL: url, SECRET_KEY: secretKey, LOG_LEVEL: 'warn' });
  const ctx = await openContext(config, createLogger('warn', process.stderr));
  try {
    const created = await bootstrap(ctx, { presetKey: adminKey });
    if (created.kind !== 'created') throw new Error('the notification database already had an organization');
    const now = ctx.clock.now();
    for (let first = 0; first < nodes; first += BATCH) {
      const rows: Insertable<NodesTable>[] = [];
      const tunnels: NewResource[] = [];
      for (let i = first; i < Math.min(first + BATCH, nodes); i += 1) {
        const id = newId(now);
        rows.push({
          id,
          org_id: created.orgId,
          name: nodeName(i),
          hardware_serial_number: null,
          token_hash: sha256Hex(nodeToken(i)),
          labels: '{}',
          max_headless_time: 1_440,
          node_state: 'ALIVE',
          state_since: now,
          last_seen_at: now,
          addresses: '[]',
          software_version: null,
          upgrade_status: null,
          cert_not_before: null,
          cert_not_after: null,
          sequence: 1,
          report_digest: null,
          created_at: now,
        });
        tunnels.push({ id: newId(now), node_id: id, ...TUNNEL, state: SEEDED_STATE, at: now });
      }
      await ctx.db.transaction().execute(async (trx) => {
        await trx.insertInto('nodes').values(rows).execute();
        await insertResources(trx, 'tunnels', tunnels);
      });
    }
    // A deployment's autovacuum would have analysed the tables; the server here may run without it.
    if (config.database.kind === 'postgres') await sql`analyze`.execute(ctx.db);
  } finally {
    await closeContext(ctx);
  }
  return { url, secretKey, adminKey, nodes, ms: performance.now() - started };
}
