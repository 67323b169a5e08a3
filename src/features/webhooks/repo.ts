import { CHANNEL_TYPES, type EndpointKind, type Executor, type WebhooksTable } from '../../db/types.js';

export type WebhookRow = WebhooksTable;

/** The kinds of endpoint a query reads: webhooks, or the channels (features/channels) that share their table. */
export type Kinds = readonly EndpointKind[];
export const WEBHOOK: Kinds = ['webhook'];
/** Channels are rows of this table too (docs/decisions/0006-channels-share-the-endpoint-table.md). */
export const CHANNELS: Kinds = CHANNEL_TYPES;

export interface WebhookListRow extends WebhookRow {
  creator_name: string;
}

/** A new endpoint's row: what it is given, and a clean record of failures. */
export function newEndpointRow(
  given: Pick<
    WebhookRow,
    'id' | 'kind' | 'user_id' | 'name' | 'url' | 'secret_sealed' | 'is_enabled' | 'disabled_reason'
  > &
    Partial<Pick<WebhookRow, 'headers' | 'labels'>>,
  now: number,
): WebhookRow {
  const clean = {
    consecutive_failures: 0,
    retry_at: null,
    last_failure_at: null,
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
  };
  return { headers: '{}', labels: '{}', ...clean, ...given, created_at: now, updated_at: now };
}

export async function insertWebhook(db: Executor, row: WebhookRow): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

export async function countWebhooksOfUser(db: Executor, userId: string, kinds = WEBHOOK): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('kind', 'in', kinds)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findOwnWebhook(
  db: Executor,
  id: string,
  userId: string,
  kinds = WEBHOOK,
): Promise<WebhookRow | undefined> {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('kind', 'in', kinds)
    .executeTakeFirst();
}

function listQuery(db: Executor, userId: string, kinds: Kinds) {
  return db
    .selectFrom('webhooks')
    .innerJoin('users', 'users.id', 'webhooks.user_id')
    .selectAll('webhooks')
    .select('users.name as creator_name')
    .where('webhooks.user_id', '=', userId)
    .where('webhooks.kind', 'in', kinds);
}

export async function listOwnWebhooks(
  db: Executor,
  userId: string,
  kinds = WEBHOOK,
): Promise<WebhookListRow[]> {
  return listQuery(db, userId, kinds).orderBy('webhooks.created_at').orderBy('webhooks.id').execute();
}

export async function findOwnWebhookWithCreator(
  db: Executor,
  id: string,
  userId: string,
  kinds = WEBHOOK,
): Promise<WebhookListRow | undefined> {
  return listQuery(db, userId, kinds).where('webhooks.id', '=', id).executeTakeFirst();
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

/**
 * Erases the previous secrets that stopped signing by `now`. Signing already ignores them by the clock; this
 * only keeps a dead secret from staying at rest. The version is left alone: nothing a request does changes.
 */
export async function clearExpiredPreviousSecrets(db: Executor, now: number): Promise<number> {
  const result = await db
    .updateTable('webhooks')
    .set({ previous_secret_sealed: null, previous_secret_expires_at: null })
    .where('previous_secret_expires_at', '<=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function deleteWebhook(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}
