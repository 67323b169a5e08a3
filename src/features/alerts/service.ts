import { transaction } from '../../db/transaction.js';
import type { ServiceContext } from '../../context.js';
import type { AlertChannelType, EndpointKind, Executor } from '../../db/types.js';
import { badRequest, notFound, unprocessable } from '../../http/errors.js';
import { mapPage, type Page, type PageRequest } from '../../http/lists.js';
import { newId } from '../../lib/ids.js';
import { allConditions, TYPE_INFO, type NotificationType } from '../notifications/types.js';
import { isInSubtree } from '../orgs/repo.js';
import { findOwnWebhook } from '../webhooks/repo.js';
import { touchSubscriptions } from '../users/repo.js';
import { cachedSubscriptionList } from '../users/subscription-lists.js';
import { listedOrg } from '../orgs/service.js';
import { DISABLED_WEBHOOK_MESSAGE } from '../webhooks/service.js';

import { presentGrouping, storedGrouping } from './grouping.js';
import * as repo from './repo.js';
import { normalizeSettings, type NormalizedSettings, type SettingsInput } from './rules.js';
import { checkScopes } from './scopes.js';

const DISABLED_CHANNEL_MESSAGE =
  'The channel is disabled and cannot be associated with the alert: a successful test enables it again.';

export interface AlertInput {
  name: string;
  type: NotificationType;
  settings: SettingsInput;
  channel_type?: AlertChannelType;
  channel_id?: string;
}

export interface AlertEdit {
  name?: string;
  type?: NotificationType;
  settings?: Partial<SettingsInput>;
  channel_type?: AlertChannelType;
  channel_id?: string;
}

interface Channel {
  channelType: AlertChannelType;
  webhookId: string | null;
  emailChannelId: string | null;
}

/** The create rules of settings for one type, the organization's visibility included. */
async function resolveSettings(
  ctx: ServiceContext,
  trx: Executor,
  type: NotificationType,
  input: SettingsInput,
): Promise<NormalizedSettings> {
  const settings = normalizeSettings(type, input);
  if (!settings.ok) {
    const first = settings.problems[0];
    throw badRequest(`Invalid settings: "${first?.field}" ${first?.message}.`, settings.problems);
  }
  if (!(await isInSubtree(trx, ctx.actor.orgId, settings.value.orgId)))
    throw notFound('Organization settings.org_id');
  await checkScopes(trx, ctx.actor.orgId, settings.value);
  return settings.value;
}

async function emailChannel(
  ctx: ServiceContext,
  trx: Executor,
  channelId: string | undefined,
): Promise<Channel> {
  if (channelId !== undefined) {
    throw badRequest('channel_id is only for the webhook channel; leave it out for e-mail.', [
      { field: 'channel_id', message: 'is only used with channel_type webhook' },
    ]);
  }
  const emailChannelId = await repo.ensureEmailChannel(trx, ctx.actor.userId, ctx.clock.now());
  return { channelType: 'email', webhookId: null, emailChannelId };
}

function channelIdRequired(kind: EndpointKind) {
  const what = kind === 'webhook' ? 'webhooks' : `${kind} channels`;
  return badRequest(`channel_id is required for the ${kind} channel: the id of one of your ${what}.`, [
    { field: 'channel_id', message: `is required with channel_type ${kind}` },
  ]);
}

/**
 * Rules for putting an alert on an endpoint it is not on yet: own and of that kind (404), enabled (422), and
 * for a webhook within the per-user limit of webhook alerts.
 */
async function attachEndpoint(
  ctx: ServiceContext,
  trx: Executor,
  kind: EndpointKind,
  endpointId: string,
  alertId: string | undefined,
): Promise<Channel> {
  const endpoint = await findOwnWebhook(trx, endpointId, ctx.actor.userId, [kind]);
  const webhook = kind === 'webhook';
  if (endpoint === undefined) throw notFound(`${webhook ? 'Webhook' : 'Channel'} channel_id`);
  if (endpoint.is_enabled !== 1)
    throw unprocessable(webhook ? DISABLED_WEBHOOK_MESSAGE : DISABLED_CHANNEL_MESSAGE);
  const max = ctx.config.maxWebhookAlertsPerUser;
  if (webhook && (await repo.countWebhookAlertsOfUser(trx, ctx.actor.userId, alertId)) >= max) {
    throw unprocessable(`You already have ${max} alerts with a webhook channel, the most allowed.`);
  }
  return { channelType: kind, webhookId: endpoint.id, emailChannelId: null };
}

async function resolveNewChannel(ctx: ServiceContext, trx: Executor, input: AlertInput): Promise<Channel> {
  const kind = input.channel_type ?? 'email';
  if (kind === 'email') return emailChannel(ctx, trx, input.channel_id);
  if (input.channel_id === undefined) throw channelIdRequired(kind);
  return attachEndpoint(ctx, trx, kind, input.channel_id, undefined);
}

async function resolveEditedChannel(
  ctx: ServiceContext,
  trx: Executor,
  existing: repo.AlertRow,
  edit: AlertEdit,
): Promise<Channel> {
  // A channel_id alone moves the alert to another endpoint of its kind (from e-mail: a webhook).
  const onEndpoint = existing.channel_type !== 'email';
  const channelType =
    edit.channel_type ??
    (edit.channel_id === undefined || onEndpoint ? existing.channel_type : ('webhook' as const));
  if (channelType === 'email') return emailChannel(ctx, trx, edit.channel_id);
  const current = existing.channel_type === channelType ? existing.webhook_id : null;
  const endpointId = edit.channel_id ?? current;
  if (endpointId === null) throw channelIdRequired(channelType);
  // Staying attaches nothing, so an alert stays editable on an endpoint disabled since (any webhook edit does).
  if (endpointId === current) return { channelType, webhookId: endpointId, emailChannelId: null };
  return attachEndpoint(ctx, trx, channelType, endpointId, existing.id);
}

function toColumns(settings: NormalizedSettings, channel: Channel) {
  return {
    org_id: settings.orgId,
    alert_me: settings.alertMe,
    duration_minutes: settings.durationMinutes,
    include_child: settings.includeChild ? 1 : 0,
    suppress_when_node_unreachable: settings.suppressWhenNodeUnreachable ? 1 : 0,
    channel_type: channel.channelType,
    webhook_id: channel.webhookId,
    email_channel_id: channel.emailChannelId,
    scope_node_id: settings.scopes.nodeId,
    scope_tunnel_id: settings.scopes.tunnelId,
    scope_service_id: settings.scopes.serviceId,
    ...settings.grouping,
  };
}

export async function createAlert(ctx: ServiceContext, input: AlertInput): Promise<AlertResponse> {
  return transaction(ctx.db, async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    const settings = await resolveSettings(ctx, trx, input.type, input.settings);
    const channel = await resolveNewChannel(ctx, trx, input);
    const now = ctx.clock.now();
    const row: repo.AlertRow = {
      id: newId(now),
      user_id: ctx.actor.userId,
      name: input.name,
      type: input.type,
      created_at: now,
      ...toColumns(settings, channel),
    };
    await repo.insertAlert(trx, row);
    // Read in the transaction: a delete committed right after it must not turn this create into a 404.
    return readOwnAlert(trx, row.id, ctx.actor.userId);
  });
}

/** Whether the edit names anything that can change: `type` never can, and `settings: {}` changes nothing. */
function hasChanges(edit: AlertEdit): boolean {
  return (
    edit.name !== undefined ||
    edit.channel_type !== undefined ||
    edit.channel_id !== undefined ||
    (edit.settings !== undefined && Object.keys(edit.settings).length > 0)
  );
}

function nothingToChange(edit: AlertEdit) {
  return badRequest('Nothing to change: give a name, a channel or at least one field of settings.', [
    ...(edit.settings === undefined ? [] : [{ field: 'settings', message: 'has no field to change' }]),
    ...(edit.type === undefined ? [] : [{ field: 'type', message: "is the alert's type already" }]),
  ]);
}

/**
 * Changes the fields given and keeps the others; settings are merged field by field. The webhook rules
 * apply only when the alert moves onto a webhook, not while it stays on its own.
 */
export async function editAlert(ctx: ServiceContext, id: string, edit: AlertEdit): Promise<AlertResponse> {
  const changes = hasChanges(edit);
  if (!changes && edit.type === undefined) throw nothingToChange(edit);
  return transaction(ctx.db, async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    const existing = await repo.findOwnAlert(trx, id, ctx.actor.userId);
    if (existing === undefined) throw notFound('Alert');
    const type = existing.type as NotificationType;
    if (edit.type !== undefined && edit.type !== type) {
      throw badRequest(
        "An alert's type cannot be changed; create a new alert of that type and delete this one.",
        [{ field: 'type', message: `is ${type} for this alert and cannot be changed` }],
      );
    }
    if (!changes) throw nothingToChange(edit);
    const settings = await resolveSettings(ctx, trx, type, { ...storedSettings(existing), ...edit.settings });
    const channel = await resolveEditedChannel(ctx, trx, existing, edit);
    await repo.updateAlert(trx, id, { name: edit.name ?? existing.name, ...toColumns(settings, channel) });
    // Read in the transaction: a delete committed right after it must not turn this edit into a 404.
    return readOwnAlert(trx, id, ctx.actor.userId);
  });
}

function storedSettings(row: repo.AlertRow): SettingsInput {
  return {
    org_id: row.org_id,
    ...(row.alert_me === null ? {} : { alert_me: row.alert_me }),
    ...(row.duration_minutes === null ? {} : { duration: row.duration_minutes }),
    include_child: row.include_child === 1,
    suppress_when_node_unreachable: row.suppress_when_node_unreachable === 1,
    node_id: row.scope_node_id,
    tunnel_id: row.scope_tunnel_id,
    pod_id: row.scope_service_id,
    ...storedGrouping(row),
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
      alert_me: row.alert_me ?? allConditions(row.type as NotificationType),
      ...(row.duration_minutes === null ? {} : { duration: String(row.duration_minutes) }),
      include_child: row.include_child === 1 ? 'true' : 'false',
      ...(info !== undefined && info.resourceKind !== 'node'
        ? { suppress_when_node_unreachable: row.suppress_when_node_unreachable === 1 ? 'true' : 'false' }
        : {}),
      ...(row.scope_node_id === null ? {} : { node_id: row.scope_node_id }),
      ...(row.scope_tunnel_id === null ? {} : { tunnel_id: row.scope_tunnel_id }),
      ...(row.scope_service_id === null ? {} : { pod_id: row.scope_service_id }),
      ...presentGrouping(row, row.channel_type),
    },
    id: row.id,
    display_type: displayName,
    channel_type: row.channel_type.toUpperCase() as Uppercase<AlertChannelType>,
    channel:
      row.channel_type === 'email'
        ? { id: row.email_channel_id ?? '', name: 'Email' }
        : { id: row.webhook_id ?? '', name: row.webhook_name ?? '' },
    created_at: new Date(row.created_at).toISOString().replace('Z', '+00:00'),
    created_by: { id: row.user_id, name: row.creator_name },
  };
}

export type AlertResponse = ReturnType<typeof present>;

/** A page of the caller's alerts; with `orgId`, of those whose org_id is it or one below it. */
export async function listAlerts(
  ctx: ServiceContext,
  page: PageRequest,
  orgId?: string,
): Promise<Page<AlertResponse>> {
  const under = await listedOrg(ctx, orgId);
  return cachedSubscriptionList(
    ctx,
    'alerts',
    async () => mapPage(await repo.listOwnAlerts(ctx.db, ctx.actor.userId, page, under), present),
    page,
    under,
  );
}

async function readOwnAlert(db: Executor, id: string, userId: string): Promise<AlertResponse> {
  const row = await repo.findOwnAlert(db, id, userId);
  if (row === undefined) throw notFound('Alert');
  return present(row);
}

export async function getAlert(ctx: ServiceContext, id: string): Promise<AlertResponse> {
  return readOwnAlert(ctx.db, id, ctx.actor.userId);
}

export async function deleteAlert(ctx: ServiceContext, id: string) {
  const deleted = await transaction(ctx.db, async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    return repo.deleteOwnAlert(trx, id, ctx.actor.userId);
  });
  if (!deleted) throw notFound('Alert');
  return { id, message: 'Alert deleted.', status: 'SUCCESS' as const };
}
