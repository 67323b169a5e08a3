// A fresh database: migrated and bootstrapped by the build's own code (another build's with --compare, so its
// schema is its own), then nodes written straight in, ALIVE, holding exactly what their agents report; by
// default one CONNECTED tunnel, so that a report naming it in the other state is one TUNNEL_STATE_CHANGE.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CompiledQuery, type Insertable } from 'kysely';
import * as config from '../../src/config.js';
import type { NodesTable } from '../../src/db/types.js';
import * as bootstrap from '../../src/features/bootstrap/service.js';
import * as nameSort from '../../src/features/fleet/nodes/name-sort.js';
import * as resources from '../../src/features/fleet/resources-repo.js';
import * as ids from '../../src/lib/ids.js';
import * as tokens from '../../src/lib/tokens.js';
import * as logger from '../../src/observability/logger.js';
import * as runtime from '../../src/runtime.js';
import { THIS_BUILD, type Build } from '../lib/service.js';

const BATCH = 500;
export const TUNNEL = { key: 'uplink', name: 'Uplink' } as const;

export const nodeToken = (i: number) => `ewn_notify_${String(i).padStart(7, '0')}`;
export const nodeName = (i: number) => `notify-node-${i}`;

/** The report that moves a node's tunnel away from its state after `flips` earlier changes. */
export function reportBody(flips: number): string {
  const state = flips % 2 === 0 ? 'TERMINATED' : 'CONNECTED';
  return JSON.stringify({ tunnels: [{ ...TUNNEL, state }] });
}

export type Resource = { key: string; name: string; state: string };

/** Node i as seeded: its token and name, columns beyond the defaults, its tunnels and services. */
export interface NodeSeed {
  token: string;
  name: string;
  fields?: Partial<Insertable<NodesTable>>;
  tunnels: Resource[];
  services?: Resource[];
}

const oneTunnel = (i: number): NodeSeed => ({
  token: nodeToken(i),
  name: nodeName(i),
  tunnels: [{ ...TUNNEL, state: 'CONNECTED' }],
});

const OWN = { ...config, ...bootstrap, ...nameSort, ...resources, ...ids, ...tokens, ...logger, ...runtime };

/** A build from before the natural name order has neither its key nor its column. */
type Modules = Omit<typeof OWN, 'naturalSortKey'> & Partial<typeof nameSort>;

/** The build's modules for the seed: this checkout's own, or the same files from another build's dist/. */
async function buildModules(build: Build): Promise<Modules> {
  if (build === THIS_BUILD) return OWN;
  const files = ['config', 'features/bootstrap/service', 'features/fleet/resources-repo', 'lib/ids'];
  const load = (file: string) => import(pathToFileURL(path.join(build.root, 'dist', `${file}.js`)).href);
  const loaded = [...files, 'lib/tokens', 'observability/logger', 'runtime'].map(load);
  loaded.push(load('features/fleet/nodes/name-sort').catch(() => ({})));
  return Object.assign({}, ...(await Promise.all(loaded)));
}

export type SeededDatabase = Awaited<ReturnType<typeof seedDatabase>>;

/**
 * Migrates and seeds `nodes` nodes into the database at `url` (a sqlite: path or a fresh PostgreSQL one);
 * `env` is what a service on it needs: DATABASE_URL, SECRET_KEY, and BOOTSTRAP_API_KEY, the admin's key.
 */
export async function seedDatabase(url: string, nodes: number, describe = oneTunnel, build = THIS_BUILD) {
  const started = performance.now();
  const m = await buildModules(build);
  const secretKey = randomBytes(32).toString('hex');
  const adminKey = `ew_bench_${randomBytes(32).toString('base64url')}`;
  const settings = m.loadConfig({ DATABASE_URL: url, SECRET_KEY: secretKey, LOG_LEVEL: 'warn' });
  const ctx = await m.openContext(settings, m.createLogger('warn', process.stderr));
  try {
    const created = await m.bootstrap(ctx, { presetKey: adminKey });
    if (created.kind !== 'created') throw new Error('the database already had an organization');
    const now = ctx.clock.now();
    // Ids as if the nodes had been registered one after the other over the last day (UUIDv7 starts with a time).
    const since = now - 86_400_000;
    for (let first = 0; first < nodes; first += BATCH) {
      const rows: Insertable<NodesTable>[] = [];
      const added = { tunnels: [] as resources.NewResource[], services: [] as resources.NewResource[] };
      for (let i = first; i < Math.min(first + BATCH, nodes); i += 1) {
        const node = describe(i);
        const id = m.newId(since + i);
        rows.push({
          id,
          org_id: created.orgId,
          name: node.name,
          name_sort: m.naturalSortKey?.(node.name) as string, // left out (undefined) where there is no column
          token_hash: m.sha256Hex(node.token),
          labels: '{}',
          max_headless_time: 1_440,
          node_state: 'ALIVE',
          state_since: since,
          last_seen_at: now,
          addresses: '[]',
          sequence: 1,
          created_at: since,
          ...node.fields,
          // tunnels_down and services_down keep their default (0): every seeded tunnel and service is up.
        } as Insertable<NodesTable>);
        for (const kind of ['tunnels', 'services'] as const)
          for (const resource of node[kind] ?? [])
            added[kind].push({ ...resource, id: m.newId(since + i), node_id: id, at: since });
      }
      await ctx.db.transaction().execute(async (trx) => {
        await trx.insertInto('nodes').values(rows).execute();
        await m.insertResources(trx, 'tunnels', added.tunnels);
        await m.insertResources(trx, 'services', added.services);
      });
    }
    // A deployment's autovacuum would have analysed the tables; the server here may run without it.
    if (settings.database.kind === 'postgres') await ctx.db.executeQuery(CompiledQuery.raw('analyze'));
  } finally {
    await m.closeContext(ctx);
  }
  const env = { DATABASE_URL: url, SECRET_KEY: secretKey, BOOTSTRAP_API_KEY: adminKey };
  return { secretKey, adminKey, env, ms: performance.now() - started };
}
