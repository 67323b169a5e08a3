import { randomBytes } from 'node:crypto';
import { transaction } from '../../db/transaction.js';
import { removalAnswer } from '../alerts/scoped-removal.js';
import type { ServiceContext } from '../../context.js';
import type { WebhookDisabledReason } from '../../db/types.js';
import { AppError, badRequest, conflict, notFound, unprocessable } from '../../http/errors.js';
import { isoUtc } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { alertIdsUsingWebhook, deleteAlerts, subscriptionCounts } from '../alerts/repo.js';
import { cancelUnsent, holdPending, lockWebhook } from '../deliveries/repo.js';
import { touchSubscriptions } from '../users/repo.js';
import { cachedSubscriptionList } from '../users/subscription-lists.js';
import { ownItemsListed } from '../orgs/service.js';
import * as repo from './repo.js';
import { checkWebhookUrl, headerProblems } from './rules.js';

export interface WebhookInput {
  name?: string;
  url?: string;
  metadata?: { labels?: Record<string, string> };
  Header?: Record<string, string>;
  secret?: string;
}

export const DISABLED_WEBHOOK_MESSAGE = 'The webhook is disabled and cannot be associated with the alert.';

function validate(ctx: ServiceContext, input: WebhookInput): void {
  if (input.url !== undefined) {
    const verdict = checkWebhookUrl(input.url, ctx.allowedNetworks);
    if (!verdict.ok)
      throw new AppError(verdict.status, verdict.message, [{ field: 'url', message: verdict.message }]);
  }
  if (input.Header !== undefined) {
    const problems = headerProblems(input.Header);
    if (problems.length > 0) {
      const first = problems[0];
      throw badRequest(
        `Header ${first === undefined ? 'is invalid' : `"${first.field}" ${first.message}`}.`,
        problems,
      );
    }
  }
}

/**
 * A Standard Webhooks secret, `whsec_` and the base64 of 32 random bytes: within the secret alphabet
 * (0x21–0x7E), so the challenge keys on its text as on any other, and its notifications carry both schemes.
 */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function createdAnswer(row: repo.WebhookRow, secret: string) {
  return { id: row.id, name: row.name, url: row.url, is_enabled: row.is_enabled === 1, secret };
}

export async function createWebhook(
  ctx: ServiceContext,
  input: Required<Pick<WebhookInput, 'name' | 'url'>> & WebhookInput,
) {
  validate(ctx, input);
  const now = ctx.clock.now();
  const secret = input.secret ?? generateSecret();
  const row = repo.newEndpointRow(
    {
      id: newId(now),
      kind: 'webhook',
      user_id: ctx.actor.userId,
      name: input.name,
      url: input.url,
      headers: JSON.stringify(input.Header ?? {}),
      labels: JSON.stringify(input.metadata?.labels ?? {}),
      secret_sealed: ctx.secretBox.seal(secret),
      is_enabled: 0,
      disabled_reason: 'unverified',
    },
    now,
  );
  await transaction(ctx.db, async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    const count = await repo.countWebhooksOfUser(trx, ctx.actor.userId);
    const max = ctx.config.maxWebhooksPerUser;
    if (count >= max) {
      throw unprocessable(
        `You already have ${count} webhooks; at most ${max} are allowed. Remove one first.`,
      );
    }
    await repo.insertWebhook(trx, row);
  });
  return createdAnswer(row, secret);
}

/**
 * What an edit writes. Any accepted edit disables the webhook until it is verified again (reference: states
 * and transitions).
 */
function editedColumns(input: WebhookInput, sealedSecret: string | undefined, version: number) {
  return {
    ...(input.name === undefined ? {} : { name: input.name }),
    ...(input.url === undefined ? {} : { url: input.url }),
    ...(input.Header === undefined ? {} : { headers: JSON.stringify(input.Header) }),
    ...(input.metadata === undefined ? {} : { labels: JSON.stringify(input.metadata.labels ?? {}) }),
    // A secret given in an edit replaces the current one at once, ending any rotation's overlap.
    ...(sealedSecret === undefined
      ? {}
      : { secret_sealed: sealedSecret, previous_secret_sealed: null, previous_secret_expires_at: null }),
    is_enabled: 0,
    disabled_reason: 'edited' satisfies WebhookDisabledReason,
    updated_at: version,
  } satisfies Partial<repo.WebhookRow>;
}

export async function updateWebhook(ctx: ServiceContext, id: string, input: WebhookInput) {
  validate(ctx, input);
  const sealedSecret = input.secret === undefined ? undefined : ctx.secretBox.seal(input.secret);
  const updated = await transaction(ctx.db, async (trx) => {
    // Read under the per-user lock, so edits of one user's webhooks are serialized and each builds on the
    // row as the previous one left it (verify compares versions: two edits must never write the same one).
    await touchSubscriptions(trx, ctx.actor.userId);
    // An edit disables the webhook: locked as every change of that is (docs/deliveries.md#locks).
    await lockWebhook(trx, id);
    const existing = await repo.findOwnWebhook(trx, id, ctx.actor.userId);
    if (existing === undefined) throw notFound('Webhook');
    const changes = editedColumns(
      input,
      sealedSecret,
      repo.nextVersion(existing.updated_at, ctx.clock.now()),
    );
    await repo.updateWebhook(trx, id, changes);
    // Nothing goes to an unverified URL: what was pending waits, held, for the next verify.
    ctx.alertMetrics.notificationsEntered(trx, 'held', null, await holdPending(trx, id));
    return { ...existing, ...changes };
  });
  return createdAnswer(updated, input.secret ?? ctx.secretBox.open(updated.secret_sealed));
}

function present(row: repo.WebhookListRow, subscriptionCount: number) {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    metadata: { labels: JSON.parse(row.labels) as Record<string, string> },
    headers: JSON.parse(row.headers) as Record<string, string>,
    is_enabled: row.is_enabled === 1,
    disabled_reason: row.disabled_reason,
    created_at: isoUtc(row.created_at),
    created_by: { id: row.user_id, name: row.creator_name },
    subscription_count: subscriptionCount,
  };
}

export type WebhookView = ReturnType<typeof present>;

/** The caller's webhooks; none when `orgId` names an organization below the caller's. */
export async function listWebhooks(ctx: ServiceContext, orgId?: string): Promise<WebhookView[]> {
  if (!(await ownItemsListed(ctx, orgId))) return [];
  return cachedSubscriptionList(ctx, 'webhooks', async () => {
    const rows = await repo.listOwnWebhooks(ctx.db, ctx.actor.userId);
    const counts = await subscriptionCounts(
      ctx.db,
      rows.map((row) => row.id),
    );
    return rows.map((row) => present(row, counts.get(row.id) ?? 0));
  });
}

export async function getWebhook(ctx: ServiceContext, id: string): Promise<WebhookView> {
  const row = await repo.findOwnWebhookWithCreator(ctx.db, id, ctx.actor.userId);
  if (row === undefined) throw notFound('Webhook');
  const counts = await subscriptionCounts(ctx.db, [row.id]);
  return present(row, counts.get(row.id) ?? 0);
}

/** Without force a webhook used by alerts stays; with force it goes with its alerts, atomically. */
export function deleteWebhook(ctx: ServiceContext, id: string, force: boolean) {
  return deleteEndpoint(ctx, id, force, { kinds: repo.WEBHOOK, label: 'Webhook' });
}

/** An endpoint (a webhook, or a channel) of the caller's removed, with its alerts when forced. */
export async function deleteEndpoint(
  ctx: ServiceContext,
  id: string,
  force: boolean,
  endpoint: { kinds: repo.Kinds; label: 'Webhook' | 'Channel' },
) {
  const { kinds, label } = endpoint;
  return transaction(ctx.db, async (trx) => {
    // The same per-user lock alert creation takes, so no alert can attach to an endpoint being removed.
    await touchSubscriptions(trx, ctx.actor.userId);
    const row = await repo.findOwnWebhook(trx, id, ctx.actor.userId, kinds);
    if (row === undefined) throw notFound(label);
    const alertIds = await alertIdsUsingWebhook(trx, id);
    if (alertIds.length > 0 && !force) {
      throw conflict(
        `The ${label.toLowerCase()} is used by ${alertIds.length} alert(s); delete them first or repeat with ?force=true to delete them too.`,
      );
    }
    await deleteAlerts(trx, alertIds);
    // What it had not sent yet ends here, cancelled, rather than pending for ever (docs/deliveries.md).
    await lockWebhook(trx, id);
    const cancelled = await cancelUnsent(trx, id);
    ctx.alertMetrics.notificationsEntered(trx, 'cancelled', 'webhook_deleted', cancelled);
    await repo.deleteWebhook(trx, id);
    return removalAnswer(id, label, 'deleted', force, alertIds);
  });
}

/** One of the caller's webhooks, or with `kinds` its channels (404 otherwise). */
export async function loadOwnWebhook(
  ctx: ServiceContext,
  id: string,
  kinds = repo.WEBHOOK,
): Promise<repo.WebhookRow> {
  const row = await repo.findOwnWebhook(ctx.db, id, ctx.actor.userId, kinds);
  if (row === undefined) throw notFound(kinds === repo.WEBHOOK ? 'Webhook' : 'Channel');
  return row;
}

export function requireEnabled(row: repo.WebhookRow): void {
  if (row.is_enabled !== 1)
    throw unprocessable(row.kind === 'webhook' ? DISABLED_WEBHOOK_MESSAGE : DISABLED_ENDPOINT_MESSAGE);
}

/** A disabled channel, asked to send: a successful test enables it again. */
const DISABLED_ENDPOINT_MESSAGE = 'The channel is disabled: a successful test enables it again.';
