import type { Kysely } from 'kysely';

/**
 * Slack, Microsoft Teams and PagerDuty channels are endpoints of the delivery engine like webhooks: their
 * rows live in `webhooks`, with the gate, the slots and the delivery log they share, told apart by `kind`
 * (docs/decisions/0006-channels-share-the-endpoint-table.md). Every row so far is a webhook.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('webhook'))
    .execute();
}
