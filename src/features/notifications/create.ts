import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import { notificationPayload, type EventFacts } from '../../notifications/payload.js';
import type { NotificationType, ResourceKind } from '../../notifications/types.js';
import { startDelivery } from '../deliveries/start.js';
import { notificationEmail } from './email.js';
import { organizationChain } from './org-chain.js';
import { NODE_UNREACHABLE, nodeUnreachableBehind } from './suppression.js';
import { insertNotification, type EventRow, type WatchingAlert } from './repo.js';

/** Node names the caller already knows (by id), so the notification does not read them again. */
export type KnownNodes = ReadonlyMap<string, string>;

async function nodeNameOf(trx: Executor, event: EventRow, known: KnownNodes | undefined): Promise<string> {
  if (event.resource_kind === 'node') return event.resource_name;
  const name = known?.get(event.node_id);
  if (name !== undefined) return name;
  const node = await trx
    .selectFrom('nodes')
    .select('name')
    .where('id', '=', event.node_id)
    .executeTakeFirst();
  return node?.name ?? '';
}

async function factsOf(
  ctx: AppContext,
  trx: Executor,
  event: EventRow,
  known: KnownNodes | undefined,
): Promise<EventFacts> {
  const organization = (await organizationChain(ctx, trx, event.org_id))[0] ?? { id: event.org_id, name: '' };
  const nodeName = await nodeNameOf(trx, event, known);
  return {
    id: event.id,
    type: event.type as NotificationType,
    condition: event.condition,
    sequence: event.sequence,
    occurredAt: event.occurred_at,
    organization: { id: organization.id, name: organization.name },
    node: { id: event.node_id, name: nodeName },
    resource: { kind: event.resource_kind as ResourceKind, id: event.resource_id, name: event.resource_name },
    previous: event.previous_state,
    current: event.current_state,
  };
}

/**
 * The notification of an alert for an event, at most one (a check may run twice), with its delivery:
 * to the webhook (pending, or held while it is disabled) or to the owner's address through the outbox;
 * or none, the notification stored as suppressed, when an UNREACHABLE node is behind the change.
 * Runs in the transaction of the event or of the check.
 */
export async function createNotification(
  ctx: AppContext,
  trx: Executor,
  alert: WatchingAlert,
  event: EventRow,
  known?: KnownNodes,
): Promise<void> {
  const now = ctx.clock.now();
  const id = newId(now);
  const facts = await factsOf(ctx, trx, event, known);
  const payload = notificationPayload(facts, { id: alert.id, name: alert.name });
  const webhook =
    alert.channel_type === 'webhook' && alert.webhook_id !== null
      ? { id: alert.webhook_id, is_enabled: alert.webhook_enabled ?? 0 }
      : undefined;
  const suppressed =
    alert.suppress_when_node_unreachable === 1 && (await nodeUnreachableBehind(trx, event))
      ? NODE_UNREACHABLE
      : null;
  const inserted = await insertNotification(trx, {
    id,
    user_id: alert.user_id,
    alert_id: alert.id,
    alert_name: alert.name,
    event_id: event.id,
    type: event.type,
    condition: event.condition,
    org_id: event.org_id,
    node_id: event.node_id,
    channel_type: alert.channel_type,
    webhook_id: alert.webhook_id,
    email_id: null,
    // Held from the start when the webhook is disabled: sent once it is verified again.
    status:
      suppressed !== null
        ? 'suppressed'
        : webhook === undefined || webhook.is_enabled === 1
          ? 'pending'
          : 'held',
    reason: suppressed,
    payload: JSON.stringify(payload),
    occurred_at: event.occurred_at,
    created_at: now,
  });
  if (!inserted || suppressed !== null) return;
  if (webhook !== undefined) {
    await startDelivery(ctx, trx, id, webhook, now);
    return;
  }
  const owner = await trx
    .selectFrom('users')
    .select('email')
    .where('id', '=', alert.user_id)
    .executeTakeFirstOrThrow();
  const link = `${ctx.config.publicUrl}/api/v1/notification/${id}`;
  const emailId = await ctx.mailer.enqueue(trx, notificationEmail(owner.email, payload, link));
  await trx.updateTable('notifications').set({ email_id: emailId }).where('id', '=', id).execute();
}
