import type { ServiceContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { badRequest, notFound, unprocessable } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { TYPE_INFO, type NotificationType } from '../../notifications/types.js';
import { isInSubtree } from '../orgs/repo.js';
import { findOwnWebhook } from '../webhooks/repo.js';
import { touchSubscriptions } from '../users/repo.js';
import { cachedSubscriptionList } from '../users/subscription-lists.js';
import { DISABLED_WEBHOOK_MESSAGE } from '../webhooks/service.js';
import * as repo from './repo.js';
import { normalizeSettings, type SettingsInput } from './rules.js';

export interface AlertInput {
  name: string;
  type: NotificationType;
  settings: SettingsInput;
  channel_type?: 'email' | 'webhook';
  channel_id?: string;
}

export type AlertEdit = Partial<Omit<AlertInput, 'type'>>;

/** Checks every rule of an alert as it would be stored, for create and edit alike. */
async function resolveAlert(
  ctx: ServiceContext,
  trx: Executor,
  input: AlertInput,
  alertId: string | undefined,
) {
  const settings = normalizeSettings(input.type, input.settings);
  if (!settings.ok) {
    const first = settings.problems[0];
    throw badRequest(`Invalid settings: "${first?.field}" ${first?.message}.`, settings.problems);
  }
  if (!(await isInSubtree(trx, ctx.actor.orgId, settings.value.orgId)))
    throw notFound('Organization settings.org_id');
  const channelType = input.channel_type ?? 'email';
  if (channelType === 'email') {
    if (input.channel_id !== undefined) {
      throw badRequest('channel_id is only for the webhook channel; leave it out for e-mail.', [
        { field: 'channel_id', message: 'is only used with channel_type webhook' },
      ]);
    }
    const emailChannelId = await repo.ensureEmailChannel(trx, ctx.actor.userId, ctx.clock.now());
    return { settings: settings.value, channelType, webhookId: null, emailChannelId };
  }
  if (input.channel_id === undefined) {
    throw badRequest('channel_id is required for the webhook channel: the id of one of your webhooks.', [
      { field: 'channel_id', message: 'is required with channel_type webhook' },
    ]);
  }
  const webhook = await findOwnWebhook(trx, input.channel_id, ctx.actor.userId);
  if (webhook === undefined) throw notFound('Webhook channel_id');
  if (webhook.is_enabled !== 1) throw unprocessable(DISABLED_WEBHOOK_MESSAGE);
  const max = ctx.config.maxWebhookAlertsPerUser;
  if ((await repo.countWebhookAlertsOfUser(trx, ctx.actor.userId, alertId)) >= max) {
    throw unprocessable(`You already have ${max} alerts with a webhook channel, the most allowed.`);
  }
  return { settings: settings.value, channelType, webhookId: webhook.id, emailChannelId: null };
}

function toColumns(resolved: Awaited<ReturnType<typeof resolveAlert>>) {
  return {
    org_id: resolved.settings.orgId,
    alert_me: resolved.settings.alertMe,
    duration_minutes: resolved.settings.durationMinutes,
    include_child: resolved.settings.includeChild ? 1 : 0,
    channel_type: resolved.channelType,
    webhook_id: resolved.webhookId,
    email_channel_id: resolved.emailChannelId,
  };
}

export async function createAlert(ctx: ServiceContext, input: AlertInput) {
  const id = await ctx.db.transaction().execute(async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    const resolved = await resolveAlert(ctx, trx, input, undefined);
    const now = ctx.clock.now();
    const row: repo.AlertRow = {
      id: newId(now),
      user_id: ctx.actor.userId,
      name: input.name,
      type: input.type,
      created_at: now,
      ...toColumns(resolved),
    };
    await repo.insertAlert(trx, row);
    return row.id;
  });
  return getAlert(ctx, id);
}

/** The edited alert must pass every create rule, as a whole (a disabled webhook included). */
export async function editAlert(ctx: ServiceContext, id: string, edit: AlertEdit) {
  await ctx.db.transaction().execute(async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    const existing = await repo.findOwnAlert(trx, id, ctx.actor.userId);
    if (existing === undefined) throw notFound('Alert');
    // Naming either channel field replaces the channel (e-mail unless said otherwise); else it stays.
    const channelChanged = edit.channel_type !== undefined || edit.channel_id !== undefined;
    const channel = channelChanged
      ? { channel_type: edit.channel_type ?? 'email', channel_id: edit.channel_id }
      : { channel_type: existing.channel_type, channel_id: existing.webhook_id ?? undefined };
    const merged: AlertInput = {
      name: edit.name ?? existing.name,
      type: existing.type as NotificationType,
      settings: edit.settings ?? storedSettings(existing),
      ...channel,
    };
    const resolved = await resolveAlert(ctx, trx, merged, id);
    await repo.updateAlert(trx, id, { name: merged.name, ...toColumns(resolved) });
  });
  return getAlert(ctx, id);
}

function storedSettings(row: repo.AlertRow): SettingsInput {
  return {
    org_id: row.org_id,
    ...(row.alert_me === null ? {} : { alert_me: row.alert_me }),
    ...(row.duration_minutes === null ? {} : { duration: row.duration_minutes }),
    include_child: row.include_child === 1,
  };
}

function present(row: repo.AlertView) {
  const info = TYPE_INFO[row.type as NotificationType];
  const displayName = info?.displayName ?? row.type;
  return {
    metadata: { labels: { '_service.alert.name': displayName } },
    name: row.name,
    type: row.type,
    settings: {
      org_id: row.org_id,
      ...(row.alert_me === null ? {} : { alert_me: row.alert_me }),
      ...(row.duration_minutes === null ? {} : { duration: String(row.duration_minutes) }),
      include_child: row.include_child === 1 ? 'true' : 'false',
    },
    id: row.id,
    display_type: displayName,
    channel_type: row.channel_type === 'webhook' ? ('WEBHOOK' as const) : ('EMAIL' as const),
    channel:
      row.channel_type === 'webhook'
        ? { id: row.webhook_id ?? '', name: row.webhook_name ?? '' }
        : { id: row.email_channel_id ?? '', name: 'Email' },
    created_at: new Date(row.created_at).toISOString().replace('Z', '+00:00'),
    created_by: { id: row.user_id, name: row.creator_name },
  };
}

export type AlertResponse = ReturnType<typeof present>;

export async function listAlerts(ctx: ServiceContext): Promise<{ results: AlertResponse[] }> {
  return cachedSubscriptionList(ctx, 'alerts', async () => ({
    results: (await repo.listOwnAlerts(ctx.db, ctx.actor.userId)).map(present),
  }));
}

export async function getAlert(ctx: ServiceContext, id: string): Promise<AlertResponse> {
  const row = await repo.findOwnAlert(ctx.db, id, ctx.actor.userId);
  if (row === undefined) throw notFound('Alert');
  return present(row);
}

export async function deleteAlert(ctx: ServiceContext, id: string) {
  const deleted = await ctx.db.transaction().execute(async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    return repo.deleteOwnAlert(trx, id, ctx.actor.userId);
  });
  if (!deleted) throw notFound('Alert');
  return { id, message: 'Alert deleted.', status: 'SUCCESS' as const };
}
