import { sql, type Kysely } from 'kysely';

/**
 * The one durable queue (src/jobs/). A job is `queued` until it succeeds (then its row is deleted) or
 * runs out of attempts (`dead`, kept with its last error). A claim moves `run_at` to the end of its lease,
 * so a job whose worker died is simply due again once the lease has passed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('key', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('run_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // What a claim reads: the due jobs of one kind, soonest first.
  await db.schema
    .createIndex('jobs_due_idx')
    .on('jobs')
    .columns(['kind', 'run_at'])
    .where(sql.ref('state'), '=', 'queued')
    .execute();
  // At most one unfinished job per key and kind: enqueueing it again changes nothing.
  await db.schema
    .createIndex('jobs_key_idx')
    .on('jobs')
    .columns(['kind', 'key'])
    .unique()
    .where(sql<boolean>`state = 'queued' and key is not null`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('jobs').execute();
}
