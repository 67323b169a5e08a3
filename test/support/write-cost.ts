import fs from 'node:fs';
import { sql } from 'kysely';
import { idleSqlite, sqliteFile } from '../../src/db/connect.js';
import type { Db } from '../../src/db/types.js';

/**
 * What a stretch of work wrote, read off the database itself rather than off our SQL:
 * - SQLite: the write-ahead log. With automatic checkpoints off, every page a commit wrote is a frame of the
 *   log; each page is mapped to its table or index by `dbstat`. A B-tree counts once per commit that wrote
 *   any of its pages, which is what the disk sees (a batched commit writes a B-tree once for all its rows).
 * - PostgreSQL: the table statistics of the test's schema. A row inserted, deleted or updated outside HOT
 *   writes its table and every index of it; a HOT update (no indexed column changed, room on the page)
 *   writes the table only. A B-tree counts once per row it was written for.
 */
export interface WriteCost {
  btrees: number;
  /** The B-trees written, by table or index name. */
  byBtree: Record<string, number>;
  /** SQLite: the log's bytes (frames with their headers). Undefined on PostgreSQL (the cluster is shared). */
  walBytes?: number;
}

export async function measureWrites(db: Db, work: () => Promise<void>): Promise<WriteCost> {
  return sqliteFile(db) === undefined ? postgresWrites(db, work) : sqliteWrites(db, work);
}

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

async function sqliteWrites(db: Db, work: () => Promise<void>): Promise<WriteCost> {
  const handle = idleSqlite(db)!;
  handle.pragma('wal_autocheckpoint = 0');
  handle.pragma('wal_checkpoint(TRUNCATE)');
  try {
    await work();
    const wal = fs.readFileSync(`${sqliteFile(db)!}-wal`);
    const pageSize = wal.readUInt32BE(8);
    const salt = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
    const owner = new Map<number, string>();
    for (const row of handle.prepare('select name, pageno from dbstat').all() as {
      name: string;
      pageno: number;
    }[]) {
      owner.set(row.pageno, row.name);
    }
    const byBtree: Record<string, number> = {};
    let commit = new Set<string>();
    let offset = WAL_HEADER;
    for (; offset + FRAME_HEADER + pageSize <= wal.length; offset += FRAME_HEADER + pageSize) {
      if (wal.readUInt32BE(offset + 8) !== salt[0] || wal.readUInt32BE(offset + 12) !== salt[1]) break;
      const page = wal.readUInt32BE(offset);
      // Page 1 holds the file's header (its size, its change counter) as well as the schema's root.
      commit.add(page === 1 ? 'file header' : (owner.get(page) ?? 'free pages'));
      if (wal.readUInt32BE(offset + 4) !== 0) {
        for (const name of commit) byBtree[name] = (byBtree[name] ?? 0) + 1;
        commit = new Set();
      }
    }
    const btrees = Object.entries(byBtree)
      .filter(([name]) => name !== 'file header')
      .reduce((sum, [, n]) => sum + n, 0);
    return { btrees, byBtree, walBytes: offset - WAL_HEADER };
  } finally {
    handle.pragma('wal_autocheckpoint = 1000');
  }
}

interface TableWrites {
  relname: string;
  ins: number;
  upd: number;
  hot: number;
  del: number;
  indexes: number;
}

async function tableWrites(db: Db): Promise<Map<string, TableWrites>> {
  const { rows } = await sql<TableWrites>`
    select t.relname, t.n_tup_ins::int as ins, t.n_tup_upd::int as upd, t.n_tup_hot_upd::int as hot,
      t.n_tup_del::int as del,
      (select count(*)::int from pg_index i where i.indrelid = t.relid) as indexes
    from pg_stat_user_tables t where t.schemaname = current_schema()
  `.execute(db);
  return new Map(rows.map((row) => [row.relname, row]));
}

/** A backend reports its statistics at most once a second, and when idle: wait until they stop moving. */
async function settledTableWrites(db: Db): Promise<Map<string, TableWrites>> {
  let last = '';
  for (let round = 0; round < 40; round += 1) {
    await sql`select pg_stat_clear_snapshot()`.execute(db);
    const now = await tableWrites(db);
    const key = JSON.stringify([...now.values()]);
    if (key === last) return now;
    last = key;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  }
  throw new Error('the table statistics did not settle');
}

async function postgresWrites(db: Db, work: () => Promise<void>): Promise<WriteCost> {
  const before = await settledTableWrites(db);
  await work();
  const after = await settledTableWrites(db);
  const byBtree: Record<string, number> = {};
  let btrees = 0;
  for (const [name, end] of after) {
    const start = before.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
    const rows = end.ins - start.ins + (end.del - start.del) + (end.upd - start.upd);
    const hot = end.hot - start.hot;
    const written = rows + (rows - hot) * end.indexes;
    if (written > 0) byBtree[name] = written;
    btrees += written;
  }
  return { btrees, byBtree };
}
