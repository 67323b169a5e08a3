// The node list section: the time to the first page of GET /api/v2/node in each order, 100,000 nodes (by
// default) seeded straight into a fresh database, a mix of states, silences and numbered names.
import path from 'node:path';
import { NODE_SORTS } from '../../src/features/fleet/nodes/schemas.js';
import { num, type Common } from '../lib/options.js';
import * as pg from '../lib/postgres.js';
import * as r from '../lib/report.js';
import { startService } from '../lib/service.js';
import { nodeToken, seedDatabase, type NodeSeed } from '../notify/seed.js';

type ListCase = r.Case & { database: 'sqlite' | 'postgres' };
export const NODE_LIST_CASES: ListCase[] = [
  { name: 'node list first page: SQLite', database: 'sqlite' },
  { name: 'node list first page: PostgreSQL', database: 'postgres' },
];
const [GOAL_MS, CALLS] = [100, 9];

/** 1 in 50 UNREACHABLE, 1 in 97 NEW (never seen), the others last seen within a day; names out of order. */
const mixed =
  (now: number, n: number) =>
  (i: number): NodeSeed => {
    const [spread, node_state] = [
      (i * 7919) % n,
      i % 50 ? (i % 97 ? 'ALIVE' : 'NEW') : 'UNREACHABLE',
    ] as const;
    const last_seen_at = node_state === 'NEW' ? null : now - Math.round((spread * 86_400_000) / n);
    return { token: nodeToken(i), name: `edge-${spread}`, fields: { node_state, last_seen_at }, tunnels: [] };
  };

/** Per order: the median and the slowest of CALLS answers, after one untimed. */
async function measure(c: ListCase, s: Common, nodes: number, db?: pg.BenchDatabase) {
  const url = db?.url ?? `sqlite:${path.join(s.workDir, 'node-list.db')}`;
  r.progress(`${c.name}: seeding ${r.whole(nodes)} nodes`);
  const { secretKey, adminKey } = await seedDatabase(url, nodes, mixed(Date.now(), nodes));
  if (db) await pg.vacuumAnalyze(db.url);
  const env = { DATABASE_URL: url, SECRET_KEY: secretKey, BOOTSTRAP_API_KEY: adminKey };
  const logFile = path.join(s.workDir, `node-list-${c.database}.log`);
  const service = await startService({ nodeOptions: s.nodeOptions, logFile, env });
  const rows: [string, number, number][] = [];
  for (const sort of [undefined, ...NODE_SORTS]) {
    const times: number[] = [];
    for (let call = 0; call <= CALLS; call += 1) {
      const started = performance.now();
      const page = await service.api!.call('GET', `/api/v2/node${sort ? `?sort=${sort}` : ''}`);
      if (page.total_count !== nodes) throw new Error(`${c.name}: ${page.total_count} of ${nodes} listed`);
      if (call > 0) times.push(performance.now() - started);
    }
    rows.push([sort ?? '(none: by name as stored)', r.percentile(times, 50), r.percentile(times, 100)]);
  }
  await service.stop(); // on a failure the runner's exit stops it (lib/processes.ts)
  return rows;
}

export async function runNodeListSection(cases: ListCase[], s: Common): Promise<r.SectionResult> {
  const [out, nodes] = [r.emptyResult(), num('fleet-nodes')];
  for (const c of await pg.runnable(cases, s.postgresUrl, out, 'vacuumed and analysed after the seed')) {
    const db = c.database === 'postgres' ? await pg.createBenchDatabase(s.postgresUrl) : undefined;
    const rows = await measure(c, s, nodes, db).finally(() => db?.drop());
    const cells = rows.map(([sort, p50, max]) => [sort, p50.toFixed(1), max.toFixed(1)]);
    r.addTable(out, `${c.name}, ${r.whole(nodes)} nodes, 25 a page`, 'sort | median (ms) | max (ms)', cells);
    for (const [sort, p50] of rows.slice(1))
      out.checks.push(r.goal(`${c.name}, sort=${sort}`, 'median', p50, GOAL_MS, 'ms'));
  }
  return out;
}
