import type { Kysely } from 'kysely';

// Bumped with every change to a user's webhooks or alerts (see users/repo.touchSubscriptions).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('subscriptions_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('subscriptions_version').execute();
}
