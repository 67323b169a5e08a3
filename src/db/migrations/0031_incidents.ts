import { sql, type Kysely } from 'kysely';

/**
 * Incidents (docs/decisions/0008-incidents.md): one alert's open trouble for one group key, its members,
 * and the notifications that joined it or are its messages. The e-mail digest goes: grouping is the one
 * storm mechanism. A notification still waiting in a digest whose e-mail was not written is ended as
 * expired (reason `digest_removed`), and the digest jobs are removed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('incidents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('alert_id', 'text', (c) => c.notNull().references('alerts.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('group_key', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('opened_at', 'bigint', (c) => c.notNull())
    .addColumn('resolved_at', 'bigint')
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('last_message_at', 'bigint', (c) => c.notNull())
    .addColumn('last_change_at', 'bigint', (c) => c.notNull())
    .addColumn('due_at', 'bigint')
    .addColumn('flaps', 'integer', (c) => c.notNull())
    .addColumn('firing', 'integer', (c) => c.notNull())
    .addColumn('behind_unreachable', 'integer', (c) => c.notNull())
    .execute();
  // At most one firing incident per alert and key: two events that open one at once meet here.
  await db.schema
    .createIndex('incidents_firing_key_idx')
    .on('incidents')
    .columns(['alert_id', 'group_key'])
    .where(sql.ref('status'), '=', 'firing')
    .unique()
    .execute();
  await db.schema
    .createIndex('incidents_user_idx')
    .on('incidents')
    .columns(['user_id', 'status', 'opened_at'])
    .execute();
  await db.schema.createIndex('incidents_org_idx').on('incidents').columns(['org_id', 'opened_at']).execute();

  await db.schema
    .createTable('incident_members')
    .addColumn('incident_id', 'text', (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('member_key', 'text', (c) => c.notNull())
    /** The member's latest notification: its facts as sent. */
    .addColumn('notification_id', 'text', (c) => c.notNull())
    .addColumn('condition', 'text', (c) => c.notNull())
    .addColumn('firing', 'integer', (c) => c.notNull())
    .addColumn('since', 'bigint', (c) => c.notNull())
    .addColumn('change', 'text')
    .addColumn('recovered_at', 'bigint')
    .addColumn('flaps', 'integer', (c) => c.notNull())
    .addColumn('announced', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('incident_members_pk', ['incident_id', 'member_key'])
    .execute();

  await db.schema.alterTable('notifications').addColumn('incident_id', 'text').execute();
  // Set on an incident's messages only: the members joined it, the messages speak for it.
  await db.schema.alterTable('notifications').addColumn('incident_sequence', 'integer').execute();
  await db.schema
    .createIndex('notifications_incident_idx')
    .on('notifications')
    .columns(['incident_id', 'created_at'])
    .where(sql.ref('incident_id'), 'is not', null)
    .execute();

  await sql`update notifications set status = 'expired', reason = 'digest_removed'
    where digest_id is not null and email_id is null and status = 'pending'`.execute(db);
  await sql`delete from jobs where kind = 'email.digest'`.execute(db);
  await db.schema.dropIndex('notifications_digest_idx').execute();
  await db.schema.alterTable('notifications').dropColumn('digest_id').execute();
  await db.schema.dropTable('email_digests').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('email_digests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('email_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('email_digests_user_window_idx')
    .on('email_digests')
    .columns(['user_id', 'window_start'])
    .unique()
    .execute();
  await db.schema.alterTable('notifications').addColumn('digest_id', 'text').execute();
  await db.schema.createIndex('notifications_digest_idx').on('notifications').column('digest_id').execute();
  await db.schema.dropIndex('notifications_incident_idx').execute();
  await db.schema.alterTable('notifications').dropColumn('incident_sequence').execute();
  await db.schema.alterTable('notifications').dropColumn('incident_id').execute();
  await db.schema.dropTable('incident_members').execute();
  await db.schema.dropTable('incidents').execute();
}
