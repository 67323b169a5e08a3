import type { ServiceContext } from '../../context.js';
import { notFound } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { OutboundError } from '../../net/outbound.js';
import { samplePayload } from '../notifications/payload.js';
import { resumeAfterTest } from '../deliveries/release.js';
import { endpointRequest, type EndpointToCall } from '../deliveries/request.js';
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
  const outcome = await sendSample(ctx, webhook, type);
  if (answered2xx(outcome)) await resumeAfterTest(ctx, id);
  return outcome;
}

export function answered2xx(outcome: TestOutcome): boolean {
  return outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
}

/** A sample notification of `type` for the caller's organization, sent once to an endpoint. */
export async function sendSample(
  ctx: ServiceContext,
  endpoint: EndpointToCall,
  type: NotificationType,
): Promise<TestOutcome> {
  const org = await findOrg(ctx.db, ctx.actor.orgId);
  if (org === undefined) throw notFound('Organization');
  const now = ctx.clock.now();
  const organization = { id: org.id, name: org.name };
  const payload = JSON.stringify(samplePayload(type, { eventId: newId(now), occurredAt: now, organization }));
  const request = endpointRequest(
    ctx,
    endpoint,
    { deliveryId: newId(now), payload, notificationId: null },
    now,
  );
  try {
    const response = await ctx.webhookClient.send({
      ...request,
      method: 'POST',
      deadlineMs: TEST_DEADLINE_MS,
    });
    return { status: response.status, response: readBody(response.body) };
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return { status: null, response: null, error: error.message };
  }
}
