import type { ServiceContext } from '../../context.js';
import type { ChannelType } from '../../db/types.js';
import { transaction } from '../../db/transaction.js';
import { AppError, badRequest, notFound, unprocessable } from '../../http/errors.js';
import { isoUtc } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { ownItemsListed } from '../orgs/service.js';
import { subscriptionCounts } from '../alerts/repo.js';
import { releaseHeld, resumeAfterTest } from '../deliveries/release.js';
import { lockWebhook } from '../deliveries/repo.js';
import type { NotificationType } from '../notifications/types.js';
import { touchSubscriptions } from '../users/repo.js';
import * as repo from '../webhooks/repo.js';
import { CHANNELS } from '../webhooks/repo.js';
import { checkWebhookUrl } from '../webhooks/rules.js';
import { deleteEndpoint } from '../webhooks/service.js';
import { answered2xx, sendSample, type TestOutcome } from '../webhooks/test-send.js';

export interface ChannelInput {
  name?: string;
  type?: ChannelType;
  url?: string;
  routing_key?: string;
}

/** The field that holds each type's secret target: its URL, or PagerDuty's routing key. */
const TARGET_FIELD = { slack: 'url', msteams: 'url', pagerduty: 'routing_key' } as const;

/** The target given for the type (400 naming the field when missing or the other one is given); URL rules. */
function targetOf(ctx: ServiceContext, type: ChannelType, input: ChannelInput, required: boolean) {
  const field = TARGET_FIELD[type];
  const other = field === 'url' ? 'routing_key' : 'url';
  if (input[other] !== undefined)
    throw badRequest(`${other} is not used by a ${type} channel; give ${field}.`, [
      { field: other, message: `is not used by a ${type} channel` },
    ]);
  const target = input[field];
  if (target === undefined) {
    if (!required) return undefined;
    throw badRequest(`${field} is required for a ${type} channel.`, [{ field, message: 'is required' }]);
  }
  if (field === 'url') {
    const verdict = checkWebhookUrl(target, ctx.allowedNetworks);
    if (!verdict.ok)
      throw new AppError(verdict.status, verdict.message, [{ field, message: verdict.message }]);
  }
  return target;
}

/** A secret shown masked: the URL's host, or nothing for a key, and the last 4 characters. */
export function maskTarget(type: ChannelType, target: string): string {
  const host = TARGET_FIELD[type] === 'url' ? `${new URL(target).host} ` : '';
  return `${host}…${target.slice(-4)}`;
}

function present(row: repo.WebhookRow, subscriptionCount: number) {
  return {
    id: row.id,
    name: row.name,
    type: row.kind as ChannelType,
    // The masked target is what the row keeps in `url`; the target itself is only sealed.
    target: row.url,
    is_enabled: row.is_enabled === 1,
    // Only a failure disables a channel: it is never unverified or edited.
    disabled_reason: row.disabled_reason as 'failing' | 'gone' | null,
    created_at: isoUtc(row.created_at),
    subscription_count: subscriptionCount,
  };
}

export type ChannelView = ReturnType<typeof present>;

export async function createChannel(
  ctx: ServiceContext,
  input: Required<Pick<ChannelInput, 'name' | 'type'>> & ChannelInput,
): Promise<ChannelView> {
  const target = targetOf(ctx, input.type, input, true) as string;
  const now = ctx.clock.now();
  // Nothing to prove: the vendor issued the URL or key to its owner. A failing one is disabled as a webhook is.
  const row = repo.newEndpointRow(
    {
      id: newId(now),
      kind: input.type,
      user_id: ctx.actor.userId,
      name: input.name,
      url: maskTarget(input.type, target),
      secret_sealed: ctx.secretBox.seal(target),
      is_enabled: 1,
      disabled_reason: null,
    },
    now,
  );
  await transaction(ctx.db, async (trx) => {
    // The per-user lock every change of a user's endpoints and alerts takes: the count cannot be raced past.
    await touchSubscriptions(trx, ctx.actor.userId);
    const max = ctx.config.maxChannelsPerUser;
    if ((await repo.countWebhooksOfUser(trx, ctx.actor.userId, CHANNELS)) >= max)
      throw unprocessable(`You already have ${max} channels; at most ${max} are allowed. Remove one first.`);
    await repo.insertWebhook(trx, row);
  });
  return present(row, 0);
}

export async function updateChannel(
  ctx: ServiceContext,
  id: string,
  input: ChannelInput,
): Promise<ChannelView> {
  if (input.name === undefined && input.url === undefined && input.routing_key === undefined)
    throw badRequest('Nothing to change: give name, url or routing_key.', [
      { field: 'name', message: 'or url or routing_key is required' },
    ]);
  const before = await loadOwnChannel(ctx, id);
  const type = before.kind as ChannelType;
  const target = targetOf(ctx, type, input, false);
  const updated = await transaction(ctx.db, async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    await lockWebhook(trx, id);
    const existing = await repo.findOwnWebhook(trx, id, ctx.actor.userId, CHANNELS);
    if (existing === undefined) throw notFound('Channel');
    const changes = {
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(target === undefined
        ? {}
        : { url: maskTarget(type, target), secret_sealed: ctx.secretBox.seal(target) }),
      updated_at: repo.nextVersion(existing.updated_at, ctx.clock.now()),
    };
    await repo.updateWebhook(trx, id, changes);
    return { ...existing, ...changes };
  });
  return present(updated, (await subscriptionCounts(ctx.db, [id])).get(id) ?? 0);
}

/** The caller's channels; none when `orgId` names an organization below the caller's. */
export async function listChannels(ctx: ServiceContext, orgId?: string): Promise<ChannelView[]> {
  if (!(await ownItemsListed(ctx, orgId))) return [];
  const rows = await repo.listOwnWebhooks(ctx.db, ctx.actor.userId, CHANNELS);
  const counts = await subscriptionCounts(
    ctx.db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => present(row, counts.get(row.id) ?? 0));
}

export async function getChannel(ctx: ServiceContext, id: string): Promise<ChannelView> {
  const row = await loadOwnChannel(ctx, id);
  return present(row, (await subscriptionCounts(ctx.db, [id])).get(id) ?? 0);
}

export async function loadOwnChannel(ctx: ServiceContext, id: string): Promise<repo.WebhookRow> {
  const row = await repo.findOwnWebhook(ctx.db, id, ctx.actor.userId, CHANNELS);
  if (row === undefined) throw notFound('Channel');
  return row;
}

export function deleteChannel(ctx: ServiceContext, id: string, force: boolean) {
  return deleteEndpoint(ctx, id, force, { kinds: CHANNELS, label: 'Channel' });
}

/**
 * One sample notification, sent once. A channel has no challenge to answer: a 2xx to a test proves it works,
 * so a disabled channel is enabled again and sends what it held, unless it changed while the test ran.
 */
export async function testChannel(
  ctx: ServiceContext,
  id: string,
  type: NotificationType,
): Promise<TestOutcome> {
  const channel = await loadOwnChannel(ctx, id);
  const outcome = await sendSample(ctx, channel, type);
  if (!answered2xx(outcome)) return outcome;
  if (channel.is_enabled === 1) {
    await resumeAfterTest(ctx, id);
    return outcome;
  }
  await transaction(ctx.db, async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    await lockWebhook(trx, id);
    if (await repo.enableIfUnchanged(trx, id, channel.updated_at, ctx.clock.now()))
      await releaseHeld(ctx, trx, id);
  });
  return outcome;
}
