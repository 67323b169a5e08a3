import type { ServiceContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { OutboundError } from '../../net/outbound.js';
import { samplePayload } from '../notifications/payload.js';
import { notificationHeaders } from './signing.js';
import type { NotificationType } from '../notifications/types.js';
import { findOrg } from '../orgs/repo.js';
import { loadOwnWebhook, requireEnabled } from './service.js';

export const TEST_DEADLINE_MS = 5_000;

export type TestOutcome =
  { status: number; response: unknown } | { status: null; response: null; error: string };

function readBody(body: Buffer): unknown {
  const text = body.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Sends one signed sample notification, once, and reports what the endpoint said. Never a delivery failure. */
export async function testWebhook(
  ctx: ServiceContext,
  id: string,
  type: NotificationType,
): Promise<TestOutcome> {
  const webhook = await loadOwnWebhook(ctx, id);
  requireEnabled(webhook);
  const org = await findOrg(ctx.db, ctx.actor.orgId);
  if (org === undefined) throw notFound('Organization');
  const now = ctx.clock.now();
  const deliveryId = newId(now);
  const body = JSON.stringify(
    samplePayload(type, {
      eventId: newId(now),
      occurredAt: now,
      organization: { id: org.id, name: org.name },
    }),
  );
  const headers = notificationHeaders(JSON.parse(webhook.headers) as Record<string, string>, {
    secret: ctx.secretBox.open(webhook.secret_sealed),
    timestamp: String(now),
    deliveryId,
    body,
  });
  try {
    const response = await ctx.webhookClient.send({
      url: webhook.url,
      method: 'POST',
      headers,
      body,
      deadlineMs: TEST_DEADLINE_MS,
    });
    return { status: response.status, response: readBody(response.body) };
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return { status: null, response: null, error: error.message };
  }
}
