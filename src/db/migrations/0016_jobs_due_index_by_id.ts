import { sql, type Kysely } from 'kysely';

/**
 * A claim takes the due jobs oldest first, `ORDER BY run_at, id` (jobs enqueued together share their
 * `run_at`). With the index on `(kind, run_at)` alone, PostgreSQL sorted each group of equal `run_at` under
 * the row locks at every claim, which doubled its CPU per job in the drain benchmark; with `id` in the index
 * the claim reads the jobs in order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('jobs_due_by_id_idx')
    .on('jobs')
    .columns(['kind', 'run_at', 'id'])
    .where(sql.ref('state'), '=', 'queued')
    .execute();
  await db.schema.dropIndex('jobs_due_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('jobs_due_idx')
    .on('jobs')
    .columns(['kind', 'run_at'])
    .where(sql.ref('state'), '=', 'queued')
    .execute();
  await db.schema.dropIndex('jobs_due_by_id_idx').execute();
}
