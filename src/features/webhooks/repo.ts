import type { Executor, WebhooksTable } from '../../db/types.js';

export type WebhookRow = WebhooksTable;

export interface WebhookListRow extends WebhookRow {
  creator_name: string;
}

export async function insertWebhook(db: Executor, row: WebhookRow): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

export async function countWebhooksOfUser(db: Executor, userId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findOwnWebhook(
  db: Executor,
  id: string,
  userId: string,
): Promise<WebhookRow | undefined> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

function listQuery(db: Executor, userId: string) {
  return db
    .selectFrom('webhooks')
    .innerJoin('users', 'users.id', 'webhooks.user_id')
    .selectAll('webhooks')
    .select('users.name as creator_name')
    .where('webhooks.user_id', '=', userId);
}

export async function listOwnWebhooks(db: Executor, userId: string): Promise<WebhookListRow[]> {
  return listQuery(db, userId).orderBy('webhooks.created_at').orderBy('webhooks.id').execute();
}

export async function findOwnWebhookWithCreator(
  db: Executor,
  id: string,
  userId: string,
): Promise<WebhookListRow | undefined> {
  return listQuery(db, userId).where('webhooks.id', '=', id).executeTakeFirst();
}

export async function updateWebhook(db: Executor, id: string, changes: Partial<WebhookRow>): Promise<void> {
  await db.updateTable('webhooks').set(changes).where('id', '=', id).execute();
}

/**
 * `updated_at` is the row's version: every change moves it past the version it read, even when the clock
 * stands still or goes back, so a version once seen never comes again.
 */
export function nextVersion(seenUpdatedAt: number, now: number): number {
  return Math.max(now, seenUpdatedAt + 1);
}

/** Enables a webhook unless it changed since `seenUpdatedAt` (then false: see why with a fresh read). */
export async function enableIfUnchanged(
  db: Executor,
  id: string,
  seenUpdatedAt: number,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({
      is_enabled: 1,
      disabled_reason: null,
      consecutive_failures: 0,
      updated_at: nextVersion(seenUpdatedAt, now),
    })
    .where('id', '=', id)
    .where('updated_at', '=', seenUpdatedAt)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteWebhook(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}
