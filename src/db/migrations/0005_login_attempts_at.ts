import type { Kysely } from 'kysely';

// Every login attempt deletes the attempts older than the longest limit window (auth/service): by time
// alone, which the per-address and per-account indexes cannot serve.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('login_attempts_at_idx').on('login_attempts').column('at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('login_attempts_at_idx').execute();
}
