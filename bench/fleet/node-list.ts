// The node list section: the first page of GET /api/v2/node in each order, the median of 9 answers after an
// untimed one against a goal of 100 ms, from `serve` on --fleet-nodes nodes seeded into a fresh database:
// 1 in 50 UNREACHABLE, 1 in 97 NEW (never seen), the others seen within a day, names out of order.
import path from 'node:path';
import { NODE_SORTS } from '../../src/features/fleet/nodes/schemas.js';
import { num, type Common } from '../lib/options.js';
import * as pg from '../lib/postgres.js';
import * as r from '../lib/report.js';
import { startService } from '../lib/service.js';
import { nodeToken, seedDatabase, type NodeSeed } from '../notify/seed.js';

export const NODE_LIST_CASES: (r.Case & { database: 'sqlite' | 'postgres' })[] = [
  { name: 'node list first page: SQLite', database: 'sqlite' },
  { name: 'node list first page: PostgreSQL', database: 'postgres' },
];

function mixed(i: number, n: number, now: number): NodeSeed {
  const [spread, node_state] = [(i * 7919) % n, i % 50 ? (i % 97 ? 'ALIVE' : 'NEW') : 'UNREACHABLE'] as const;
  const last_seen_at = node_state === 'NEW' ? null : now - Math.round((spread * 86_400_000) / n);
  return { token: nodeToken(i), name: `edge-${spread}`, fields: { node_state, last_seen_at }, tunnels: [] };
}

export async function runNodeListSection(cases: typeof NODE_LIST_CASES, s: Common): Promise<r.SectionResult> {
  const [out, nodes] = [r.emptyResult(), num('fleet-nodes')];
  for (const c of await pg.runnable(cases, s.postgresUrl, out, 'vacuumed and analysed after the seed')) {
    const db = c.database === 'postgres' ? await pg.createBenchDatabase(s.postgresUrl) : undefined;
    const url = db?.url ?? `sqlite:${path.join(s.workDir, 'node-list.db')}`;
    r.progress(`${c.name}: seeding ${r.whole(nodes)} nodes`);
    const now = Date.now();
    const { env } = await seedDatabase(url, nodes, (i) => mixed(i, nodes, now));
    if (db) await pg.vacuumAnalyze(db.url);
    const logFile = path.join(s.workDir, `node-list-${c.database}.log`);
    const service = await startService({ nodeOptions: s.nodeOptions, logFile, env });
    const rows: string[][] = [];
    for (const sort of [undefined, ...NODE_SORTS]) {
      const times: number[] = [];
      for (let call = 0; call <= 9; call += 1) {
        const started = performance.now();
        await service.api!.call('GET', `/api/v2/node${sort ? `?sort=${sort}` : ''}`);
        if (call > 0) times.push(performance.now() - started);
      }
      const [p50, max] = [r.percentile(times, 50), r.percentile(times, 100)];
      rows.push([sort ?? '(none: by name as stored)', p50.toFixed(1), max.toFixed(1)]);
      if (sort) out.checks.push(r.goal(`${c.name}, sort=${sort}`, 'median', p50, 100, 'ms'));
    }
    await service.stop();
    await db?.drop();
    r.addTable(out, `${c.name}, ${r.whole(nodes)} nodes, 25 a page`, 'sort | median (ms) | max (ms)', rows);
  }
  return out;
}
