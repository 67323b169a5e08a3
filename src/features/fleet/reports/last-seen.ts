import { sql } from 'kysely';
import { isPostgres } from '../../../db/connect.js';
import type { Executor } from '../../../db/types.js';

/** A node whose last report the write moved forward, with its state. */
export interface Flushed {
  id: string;
  node_state: string;
}

/** Moves each node's last report forward (never back), returning the nodes it moved and their state. */
export async function writeLastSeen(db: Executor, rows: readonly [string, number][]): Promise<Flushed[]> {
  if (isPostgres(db)) {
    const { rows: moved } = await sql<Flushed>`
      update nodes set last_seen_at = v.t
      from unnest(${rows.map(([id]) => id)}::text[], ${rows.map(([, at]) => at)}::bigint[]) as v(id, t)
      where nodes.id = v.id and (nodes.last_seen_at is null or nodes.last_seen_at < v.t)
      returning nodes.id, nodes.node_state`.execute(db);
    return moved;
  }
  const values = sql.join(rows.map(([id, at]) => sql`(${id}, ${at})`));
  const { rows: moved } = await sql<Flushed>`
    with v(id, t) as (values ${values})
    update nodes set last_seen_at = v.t from v
    where nodes.id = v.id and (nodes.last_seen_at is null or nodes.last_seen_at < v.t)
    returning id, node_state`.execute(db);
  return moved;
}
