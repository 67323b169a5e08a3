import { sql, type Kysely } from 'kysely';

/**
 * Every notification and delivery is written once and mostly never read by these columns again, yet each
 * write paid for an entry in every index. A notification's silence, digest and e-mail are set for few of
 * them: their indexes now hold only the rows that have one (a lookup by a value implies it is not null, so
 * the partial index still serves it). The oldest pending delivery is all the pending index is read for, so it
 * holds only pending deliveries, not every delivered one.
 */
const NULLABLE = [
  ['notifications_silence_idx', 'silence_id'],
  ['notifications_digest_idx', 'digest_id'],
  ['notifications_email_idx', 'email_id'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [index, column] of NULLABLE) {
    await db.schema.dropIndex(index).execute();
    await db.schema
      .createIndex(index)
      .on('notifications')
      .column(column)
      .where(sql.ref(column), 'is not', null)
      .execute();
  }
  await db.schema.dropIndex('deliveries_status_idx').execute();
  await db.schema
    .createIndex('deliveries_pending_idx')
    .on('deliveries')
    .column('created_at')
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('deliveries_pending_idx').execute();
  await db.schema
    .createIndex('deliveries_status_idx')
    .on('deliveries')
    .columns(['status', 'created_at'])
    .execute();
  for (const [index, column] of NULLABLE) {
    await db.schema.dropIndex(index).execute();
    await db.schema.createIndex(index).on('notifications').column(column).execute();
  }
}
