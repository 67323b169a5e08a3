import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import type { NotificationBody } from '../../receiver/index.js';
import { organizationChain } from '../notifications/org-chain.js';
import { insertNotification, type WatchingAlert } from '../notifications/repo.js';
import { sendingStatus, sendNotification, webhookOf } from '../notifications/send.js';
import { incidentBody, type MemberFacts } from './message-body.js';
import { memberWhat } from './member-facts.js';
import { memberPayloads, type IncidentRow, type MemberRow } from './repo.js';
import type { Member, Message } from './timeline.js';

/**
 * An incident's message, written in the transaction that decided it (the opening event's, or the flush's):
 * a notification of the incident, keyed (alert, `incident:<id>:<sequence>`) so that a decision made twice
 * makes one message, sent as every notification is (its delivery, or its e-mail).
 */

/** A member as its message shows it: its latest notification's facts, and its state in the incident. */
function memberFacts(
  member: Member,
  type: string,
  condition: string,
  body: NotificationBody | undefined,
): MemberFacts {
  return {
    ...memberWhat({ key: member.key, firing: member.firing, condition }, type, body),
    since: new Date(member.since).toISOString(),
    change: member.change ?? 'firing',
  };
}

export async function writeMessage(
  ctx: AppContext,
  trx: Executor,
  incident: IncidentRow,
  alert: WatchingAlert,
  message: Message,
  rows: ReadonlyMap<string, Pick<MemberRow, 'notification_id' | 'condition'>>,
): Promise<void> {
  const now = ctx.clock.now();
  const notificationIds = message.members.flatMap((member) => {
    const row = rows.get(member.key);
    return row === undefined ? [] : [row.notification_id];
  });
  const payloads = await memberPayloads(trx, notificationIds);
  const members = message.members.map((member) => {
    const row = rows.get(member.key);
    const payload = payloads.get(row?.notification_id ?? '');
    const body = payload === undefined ? undefined : (JSON.parse(payload) as NotificationBody);
    return memberFacts(member, incident.type, row?.condition ?? '', body);
  });
  const organization = (await organizationChain(ctx, trx, incident.org_id))[0] ?? {
    id: incident.org_id,
    name: '',
  };
  const body = incidentBody(
    {
      id: incident.id,
      sequence: message.sequence,
      status: message.status,
      reason: message.reason,
      openedAt: Number(incident.opened_at),
      resolvedAt: incident.resolved_at === null ? null : Number(incident.resolved_at),
      alert: { id: alert.id, name: alert.name },
      organization: { id: organization.id, name: organization.name },
      behindUnreachable: incident.behind_unreachable,
      flaps: message.counts.flaps,
      membersUrl: `${ctx.config.publicUrl}/api/v2/incident/${incident.id}/members`,
    },
    members,
  );
  const webhook = webhookOf(alert);
  const row = {
    id: newId(now),
    user_id: alert.user_id,
    alert_id: alert.id,
    alert_name: alert.name,
    event_id: `incident:${incident.id}:${message.sequence}`,
    type: incident.type,
    condition: message.reason,
    org_id: incident.org_id,
    node_id: incident.node_id ?? '',
    channel_type: alert.channel_type,
    webhook_id: alert.webhook_id,
    email_id: null,
    status: sendingStatus(webhook),
    reason: null,
    silence_id: null,
    incident_id: incident.id,
    incident_sequence: message.sequence,
    payload: JSON.stringify(body),
    occurred_at: now,
    created_at: now,
  };
  if (!(await insertNotification(trx, row))) return;
  const status = await sendNotification(ctx, trx, row, webhook, now);
  if (status !== undefined) ctx.alertMetrics.notificationsEntered(trx, status, null);
}
