import type { Kysely } from 'kysely';

/**
 * The W3C `traceparent` of the notification a delivery was made for, when spans are exported
 * (docs/decisions/0010-tracing.md): each request for the delivery, whichever process sends it and however
 * late, is a span of that trace, and carries it on to the receiver. Null without tracing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('deliveries').addColumn('traceparent', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('deliveries').dropColumn('traceparent').execute();
}
