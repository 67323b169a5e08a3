import type { Kysely } from 'kysely';

/**
 * A rotated webhook secret keeps signing beside the new one for a while, so receivers switch without a
 * request they refuse (docs/rules/webhooks.md#secret-rotation): the secret it replaced, sealed like the
 * current one, and when it stops. Both null when there is none; channels never have one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('previous_secret_sealed', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('previous_secret_expires_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('previous_secret_expires_at').execute();
  await db.schema.alterTable('webhooks').dropColumn('previous_secret_sealed').execute();
}
