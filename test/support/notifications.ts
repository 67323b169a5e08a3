import type { Insertable } from 'kysely';
import type { Database, NotificationStatus } from '../../src/db/types.js';
import { newId } from '../../src/lib/ids.js';

/**
 * A webhook notification's row as an alert makes one, for tests that make its delivery themselves (its
 * alert, event and node are made up: nothing reads them on the delivery path).
 */
export function webhookNotification(fields: {
  id: string;
  userId: string;
  orgId: string;
  webhookId: string;
  status: NotificationStatus;
  alertName: string;
  now: number;
}): Insertable<Database['notifications']> {
  const { now } = fields;
  return {
    id: fields.id,
    user_id: fields.userId,
    alert_id: newId(now),
    alert_name: fields.alertName,
    event_id: newId(now),
    type: 'NODE_STATE_CHANGE',
    condition: 'UNREACHABLE',
    org_id: fields.orgId,
    node_id: newId(now),
    channel_type: 'webhook',
    webhook_id: fields.webhookId,
    email_id: null,
    status: fields.status,
    reason: null,
    silence_id: null,
    incident_id: null,
    incident_sequence: null,
    payload: '{}',
    occurred_at: now,
    created_at: now,
  };
}
