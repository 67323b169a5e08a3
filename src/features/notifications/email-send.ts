import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { incidentEmail } from '../incidents/email-message.js';
import type { IncidentBody } from '../incidents/message-body.js';
import { ownerEmail, setNotificationEmail } from './email-repo.js';
import { notificationEmail } from './email.js';
import type { NotificationPayload } from './payload.js';

/**
 * A notification sent by e-mail through the outbox, to its owner's address: an event's on its own, or an
 * incident's message. The notification names its e-mail and takes its outcome. An outage is one
 * conversation by grouping (docs/rules/alerts-and-fleet.md#grouping), not by counting e-mails.
 */
export async function sendByEmail(
  ctx: AppContext,
  trx: Executor,
  notification: { id: string; user_id: string; payload: string },
): Promise<void> {
  const owner = await ownerEmail(trx, notification.user_id);
  const body = JSON.parse(notification.payload) as NotificationPayload | IncidentBody;
  // The page in the console that names the node, organization or members and links to them.
  const email =
    body.type === 'INCIDENT'
      ? incidentEmail(owner, body, `${ctx.config.publicUrl}/#/incidents/${body.incident.id}`)
      : notificationEmail(owner, body, `${ctx.config.publicUrl}/#/notifications/${notification.id}`);
  const emailId = await ctx.mailer.enqueue(trx, email);
  await setNotificationEmail(trx, notification.id, emailId);
}
