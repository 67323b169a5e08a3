import type { ServiceContext } from '../../context.js';
import type { AlertChannelType } from '../../db/types.js';
import { notFound } from '../../http/errors.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { isoUtc, isoUtcOrNull } from '../../lib/clock.js';
import type { NotificationBody } from '../../receiver/index.js';
import { currentNames } from '../notifications/repo.js';
import { whoseNotifications, type NotificationListQuery } from '../notifications/service.js';
import { isInSubtree } from '../orgs/repo.js';
import * as repo from './list-repo.js';
import { memberWhat } from './member-facts.js';
import type { MessageReason } from './timeline.js';

/**
 * The incidents API (docs/rules/alerts-and-fleet.md#incidents-api): an alert's incidents, each with its
 * messages and its members, read by the rules of the notification list (whose, and who may read one).
 */

export interface IncidentListQuery extends Pick<NotificationListQuery, 'scope' | 'org_id' | 'own'> {
  alert_id?: string;
  status?: 'firing' | 'resolved';
}

interface Named {
  id: string;
  name: string;
}

/** A name the payload of a notification that joined the incident gave, for what is gone now. */
function namesThen(payload: string | undefined): { organization?: Named; node?: Named } {
  if (payload === undefined) return {};
  const body = JSON.parse(payload) as Partial<NotificationBody>;
  return {
    ...(body.organization === undefined ? {} : { organization: body.organization }),
    ...(body.node === undefined ? {} : { node: body.node }),
  };
}

/**
 * The incidents as answers, with the names things have now: an organization or node that is gone keeps
 * the name the latest notification that joined the incident gave it, as a notification keeps its own.
 */
async function presentAll(ctx: ServiceContext, rows: readonly repo.IncidentListRow[]) {
  const [names, members] = await Promise.all([
    currentNames(ctx.db, {
      organizations: rows.map((row) => row.org_id),
      nodes: rows.flatMap((row) => (row.node_id === null ? [] : [row.node_id])),
      tunnels: [],
      services: [],
      users: rows.map((row) => row.user_id),
    }),
    repo.memberCounts(
      ctx.db,
      rows.map((row) => row.id),
    ),
  ]);
  const nameless = rows.filter(
    (row) => !names.organizations.has(row.org_id) || (row.node_id !== null && !names.nodes.has(row.node_id)),
  );
  const then = await repo.lastJoinedPayloads(
    ctx.db,
    nameless.map((row) => row.id),
  );
  return rows.map((row) => {
    const old = namesThen(then.get(row.id));
    const orgName =
      names.organizations.get(row.org_id) ??
      (old.organization?.id === row.org_id ? old.organization.name : '');
    return {
      id: row.id,
      status: row.status,
      alert: { id: row.alert_id, name: row.alert_name },
      // A user's alerts go with the user: the owner is always there.
      owner: { id: row.user_id, name: names.users.get(row.user_id) ?? '' },
      organization: { id: row.org_id, name: orgName },
      node:
        row.node_id === null
          ? null
          : {
              id: row.node_id,
              name: names.nodes.get(row.node_id) ?? (old.node?.id === row.node_id ? old.node.name : ''),
            },
      type: row.type,
      group_by: row.node_id === null ? ('organization' as const) : ('node' as const),
      opened_at: isoUtc(Number(row.opened_at)),
      resolved_at: isoUtcOrNull(row.resolved_at === null ? null : Number(row.resolved_at)),
      last_message_at: isoUtc(Number(row.last_message_at)),
      sequence: Number(row.sequence),
      counts: {
        firing: Number(row.firing),
        flaps: Number(row.flaps),
        behind_unreachable: Number(row.behind_unreachable),
        members: members.get(row.id) ?? 0,
      },
    };
  });
}

export type IncidentJson = Awaited<ReturnType<typeof presentAll>>[number];

/** The caller's incidents, or their organizations' (scope=org): the firing ones first, then newest first. */
export async function listIncidents(
  ctx: ServiceContext,
  query: IncidentListQuery,
  page: PageRequest,
): Promise<Page<IncidentJson>> {
  const found = await repo.listIncidents(
    ctx.db,
    {
      ...(await whoseNotifications(ctx, query)),
      ...(query.alert_id === undefined ? {} : { alertId: query.alert_id }),
      ...(query.status === undefined ? {} : { status: query.status }),
    },
    page,
  );
  return { total_count: found.total_count, results: await presentAll(ctx, found.results) };
}

/**
 * Whether the caller may read an incident: their own, or, with org_notifications:read, one of their
 * organization or one below it (what their scope=org list shows), as for a notification.
 */
async function mayRead(ctx: ServiceContext, row: repo.IncidentListRow): Promise<boolean> {
  if (row.user_id === ctx.actor.userId) return true;
  if (!ctx.actor.permissions.has('org_notifications:read')) return false;
  return isInSubtree(ctx.db, ctx.actor.orgId, row.org_id);
}

async function readableIncident(ctx: ServiceContext, id: string): Promise<repo.IncidentListRow> {
  const row = await repo.findIncident(ctx.db, id);
  if (row === undefined || !(await mayRead(ctx, row))) throw notFound('Incident');
  return row;
}

/** One incident the caller may read, with its messages (oldest first) and their webhook deliveries. */
export async function getIncident(ctx: ServiceContext, id: string) {
  const row = await readableIncident(ctx, id);
  const messages = await repo.messagesOf(ctx.db, id);
  const deliveries = await repo.deliveriesOfMessages(
    ctx.db,
    messages.map((message) => message.id),
  );
  const [incident] = await presentAll(ctx, [row]);
  return {
    ...incident!,
    messages: messages.map((message) => ({
      notification_id: message.id,
      sequence: Number(message.incident_sequence),
      reason: message.condition as MessageReason,
      status: message.status,
      created_at: isoUtc(Number(message.created_at)),
      channel_type: message.channel_type.toUpperCase() as Uppercase<AlertChannelType>,
      deliveries: deliveries
        .filter((delivery) => delivery.notification_id === message.id)
        .map((delivery) => ({
          id: delivery.id,
          webhook_id: delivery.webhook_id,
          status: delivery.status,
          attempts: Number(delivery.attempts),
          delivered_at: isoUtcOrNull(delivery.delivered_at === null ? null : Number(delivery.delivered_at)),
        })),
    })),
  };
}

/**
 * A member as the incident's messages show it: its latest notification's facts and its state in the
 * incident. A recovery that no notification recorded (the alert does not ask for the good state) is shown
 * as one, as the messages tell it (message.ts).
 */
function presentMember(type: string, row: repo.MemberListRow) {
  const body = row.payload === null ? undefined : (JSON.parse(row.payload) as Partial<NotificationBody>);
  const firing = Number(row.firing) === 1;
  return {
    key: row.member_key,
    ...memberWhat({ key: row.member_key, firing, condition: row.condition }, type, body),
    firing,
    since: isoUtc(Number(row.since)),
    change: row.change,
    flaps: Number(row.flaps),
  };
}

export type MemberJson = ReturnType<typeof presentMember>;

/** A page of the members of an incident the caller may read: the changed ones first, then by since. */
export async function listMembers(
  ctx: ServiceContext,
  id: string,
  page: PageRequest,
): Promise<Page<MemberJson>> {
  const incident = await readableIncident(ctx, id);
  const found = await repo.listMembers(ctx.db, id, page);
  return {
    total_count: found.total_count,
    results: found.results.map((row) => presentMember(incident.type, row)),
  };
}
