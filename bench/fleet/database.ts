// The fleet's database for one run: fresh, migrated by the service's own code, seeded, and (PostgreSQL)
// dropped when the measurements on it are done; and the counts the runner checks the service's work with.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { createLogger } from '../../src/observability/logger.js';
import { closeContext, openContext } from '../../src/runtime.js';
import { createBenchDatabase } from '../jobs/postgres.js';
import type { SimulatedFleet } from './agents.js';
import type { FleetDatabase } from './cases.js';
import { progress, whole } from './report.js';
import { seedFleet, type SeedResult } from './seed.js';

/**
 * The service's heartbeat timeout, for its processes and for the runner's context. Every node's first report
 * takes about as long as the default (90 s) on PostgreSQL here, so a node that reported early in that pass
 * could be judged UNREACHABLE before its turn in the steady stream, and that report would then be a state
 * change. With every node reporting once a pass, the sweep finds no silent node at either value.
 */
export const HEARTBEAT_TIMEOUT_S = 600;

export interface OpenDatabase {
  /** The service's context on the database, in the runner (seed, counts, sweeps). */
  ctx: AppContext;
  /** DATABASE_URL for the service's processes. */
  url: string;
  secretKey: string;
  /** PostgreSQL: the run's database, for the CPU of the backends serving it. */
  postgres: { url: string; name: string } | undefined;
  seed: SeedResult;
  drop(): Promise<void>;
}

export async function countEvents(ctx: AppContext): Promise<number> {
  const row = await ctx.db
    .selectFrom('fleet_events')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function aliveNodes(ctx: AppContext): Promise<number> {
  const row = await ctx.db
    .selectFrom('nodes')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('node_state', '=', 'ALIVE')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface FleetDatabaseOptions {
  postgresUrl: string;
  /** The steady rate: the seeded last reports are spread over one pass of the fleet at it. */
  ratePerSecond: number;
  logDir: string;
}

/** A fresh, migrated and seeded database; `drop` closes the context and removes the database (PostgreSQL). */
export async function openFleetDatabase(
  database: FleetDatabase,
  fleet: SimulatedFleet,
  options: FleetDatabaseOptions,
): Promise<OpenDatabase> {
  const secretKey = randomBytes(32).toString('hex');
  let url: string;
  let postgres: OpenDatabase['postgres'];
  let drop: () => Promise<void> = async () => undefined;
  if (database === 'sqlite') {
    url = `sqlite:${path.join(options.logDir, 'sqlite', 'edgewatch.db')}`;
  } else {
    const created = await createBenchDatabase(options.postgresUrl);
    url = created.url;
    postgres = { url: created.url, name: created.name };
    drop = () => created.drop();
  }
  let ctx: AppContext | undefined;
  try {
    const config = loadConfig({
      DATABASE_URL: url,
      SECRET_KEY: secretKey,
      LOG_LEVEL: 'warn',
      NODE_HEARTBEAT_TIMEOUT_S: String(HEARTBEAT_TIMEOUT_S),
    });
    ctx = await openContext(config, createLogger('warn', process.stderr));
    progress(`seeding ${whole(fleet.size)} nodes into ${postgres?.name ?? 'SQLite'}`);
    const seed = await seedFleet(ctx, fleet, (fleet.size * 1000) / options.ratePerSecond);
    // A deployment's autovacuum would have analysed tables this size; the server here runs without it.
    if (database === 'postgres') await sql`analyze`.execute(ctx.db);
    const opened = ctx;
    return {
      ctx: opened,
      url,
      secretKey,
      postgres,
      seed,
      drop: async () => {
        await closeContext(opened);
        await drop();
      },
    };
  } catch (error) {
    if (ctx !== undefined) await closeContext(ctx);
    await drop();
    throw error;
  }
}
