import type { AppContext } from '../../context.js';
import type { EndpointKind } from '../../db/types.js';
import type { NotificationBody } from '../../receiver/index.js';
import { channelRequest, renderChannelRequest } from '../channels/render.js';
import { INCIDENT_RENDERERS } from '../incidents/channel-messages.js';
import type { IncidentBody } from '../incidents/message-body.js';
import { signingSecrets, type SealedSecrets } from '../webhooks/secrets.js';
import { notificationHeaders } from '../webhooks/signing.js';

/** What a request to an endpoint needs of its row. */
export interface EndpointToCall extends SealedSecrets {
  kind: EndpointKind;
  url: string;
  headers: string;
}

/** One notification as an endpoint is sent it: a delivery's, or a test's sample. */
export interface MessageToSend {
  deliveryId: string;
  /** The notification's body, as stored. */
  payload: string;
  /** The notification, for the console link a channel message carries; none for a test. */
  notificationId: string | null;
}

/**
 * The request for an endpoint: a webhook gets the body as stored, signed at `at`, with its extra headers; a
 * channel gets the body rendered in its vendor's shape, to its own URL (whose path is its secret) or to
 * PagerDuty's events URL with its routing key.
 */
export function endpointRequest(
  ctx: AppContext,
  endpoint: EndpointToCall,
  message: MessageToSend,
  at: number,
): { url: string; headers: Record<string, string>; body: string } {
  if (endpoint.kind === 'webhook') {
    const secrets = signingSecrets(ctx.secretBox, endpoint, at);
    const signed = { timestamp: String(at), deliveryId: message.deliveryId, body: message.payload };
    const headers = notificationHeaders(JSON.parse(endpoint.headers) as Record<string, string>, {
      ...secrets,
      ...signed,
    });
    return { url: endpoint.url, headers, body: message.payload };
  }
  const secret = ctx.secretBox.open(endpoint.secret_sealed);
  const body = JSON.parse(message.payload) as NotificationBody | IncidentBody;
  const pagerDutyEvents = ctx.config.pagerDutyEventsUrl;
  const request =
    body.type === 'INCIDENT'
      ? renderChannelRequest(INCIDENT_RENDERERS, endpoint.kind, secret, body, {
          console: `${ctx.config.publicUrl}/#/incidents/${body.incident.id}`,
          pagerDutyEvents,
        })
      : channelRequest(endpoint.kind, secret, body, {
          console: `${ctx.config.publicUrl}/#/notifications${message.notificationId === null ? '' : `/${message.notificationId}`}`,
          pagerDutyEvents,
        });
  return { ...request, headers: { 'Content-Type': 'application/json' } };
}
