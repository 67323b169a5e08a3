import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { cancelNotifications, setNotificationStatus } from '../deliveries/repo.js';
import { startDelivery } from '../deliveries/start.js';
import { sendByEmail } from './email-send.js';
import type { WatchingAlert } from './repo.js';

/** The endpoint a notification goes to: a webhook or a channel (both endpoints of the delivery engine). */
export type Webhook = { id: string; is_enabled: number };

export function webhookOf(alert: WatchingAlert): Webhook | undefined {
  return alert.channel_type !== 'email' && alert.webhook_id !== null
    ? { id: alert.webhook_id, is_enabled: alert.webhook_enabled ?? 0 }
    : undefined;
}

/** The status a notification that goes out starts with: held while its webhook is disabled. */
export function sendingStatus(webhook: Webhook | undefined): 'pending' | 'held' {
  return webhook === undefined || webhook.is_enabled === 1 ? 'pending' : 'held';
}

/**
 * Sends a stored notification (an event's, or an incident's message): its webhook delivery (pending, or
 * held), or its e-mail through the outbox. The delivery reads its webhook again as it is made: a
 * notification whose webhook changed state since the alert was read follows the delivery, and one whose
 * webhook was deleted meanwhile (with its alert) is removed. Returns the notification's status, or
 * undefined when it was removed.
 */
export async function sendNotification(
  ctx: AppContext,
  trx: Executor,
  notification: { id: string; user_id: string; payload: string; occurred_at: number; status: string },
  webhook: Webhook | undefined,
  now: number,
): Promise<string | undefined> {
  if (webhook === undefined) {
    await sendByEmail(ctx, trx, notification);
    return notification.status;
  }
  const status = await startDelivery(ctx, trx, notification, webhook.id, now);
  if (status === undefined) {
    // Its webhook was deleted meanwhile: ended as the deletion ends what it had not sent.
    await cancelNotifications(trx, [notification.id]);
    return 'cancelled';
  }
  if (status !== notification.status) await setNotificationStatus(trx, notification.id, status);
  return status;
}
