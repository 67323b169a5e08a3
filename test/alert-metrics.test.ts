import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliveNode, silence, until } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
import { scrape, valueOf } from './support/metrics.js';
import {
  correctEndpoint,
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// The alert engine on /metrics: events, notifications by status and reason, attempts by outcome, the
// delivery latency, held notifications per webhook and the oldest pending delivery.
let t: TestApp;
let endpoint: ReceiverWithSecret;

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  endpoint.receiver.handle(correctEndpoint(() => endpoint.secret.value));
  t = await startTestApp(receiverAccess());
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

describe('alert metrics on /metrics', () => {
  it('counts what passes and shows what waits', async () => {
    const root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
    const hook = await enabledWebhook(t, endpoint);
    const subscribe = (name: string, type: string) =>
      t.request('POST', '/api/v1/mysubscriptions', {
        body: { name, type, settings: { org_id: root }, channel_type: 'webhook', channel_id: hook.id },
      });
    expect((await subscribe('Nodes', 'NODE_STATE_CHANGE')).status).toBe(201);
    expect((await subscribe('Tunnels', 'TUNNEL_STATE_CHANGE')).status).toBe(201);
    const hub = await aliveNode(t, 'metrics-hub');
    await t.jobsSettled();
    const before = await scrape(t);
    const count = (samples: typeof before, name: string, labels: Record<string, string>) =>
      valueOf(samples, name, labels) ?? 0;

    // A spoke's tunnel to the hub goes down after the hub went UNREACHABLE: suppressed.
    const spoke = await aliveNode(t, 'metrics-spoke', {
      report: { tunnels: [{ key: 'hub', name: 'Hub', state: 'CONNECTED', peer_node_id: hub.id }] },
    });
    await silence(t, hub.id);
    await t.request('POST', '/api/v1/agent/report', {
      key: null,
      headers: { 'x-node-token': spoke.token },
      body: { tunnels: [{ key: 'hub', name: 'Hub', state: 'TERMINATED', peer_node_id: hub.id }] },
    });
    await until('the webhook requests answered', () => endpoint.receiver.requests.length >= 4);
    await t.jobsSettled();
    // A delivery's outcome is counted once its transaction has committed, which the database shows first.
    const delivered = { status: 'delivered', reason: '' };
    await until('the deliveries counted', async () => {
      const now = await scrape(t);
      return (
        count(now, 'edgewatch_notifications_total', delivered) -
          count(before, 'edgewatch_notifications_total', delivered) >=
        3
      );
    });

    const after = await scrape(t);
    const grew = (name: string, labels: Record<string, string>) =>
      count(after, name, labels) - count(before, name, labels);
    expect(grew('edgewatch_events_total', { type: 'NODE_STATE_CHANGE' })).toBe(2); // spoke ALIVE, hub UNREACHABLE
    expect(grew('edgewatch_events_total', { type: 'TUNNEL_STATE_CHANGE' })).toBe(2);
    expect(grew('edgewatch_notifications_total', { status: 'suppressed', reason: 'node_unreachable' })).toBe(
      1,
    );
    expect(grew('edgewatch_notifications_total', { status: 'pending', reason: '' })).toBe(3);
    expect(grew('edgewatch_notifications_total', { status: 'delivered', reason: '' })).toBe(3);
    expect(grew('edgewatch_delivery_attempts_total', { outcome: 'success' })).toBe(3);
    expect(grew('edgewatch_delivery_latency_seconds_count', {})).toBe(3);
    expect(valueOf(after, 'edgewatch_oldest_pending_delivery_age_seconds')).toBe(0);

    // Edited, the webhook is disabled: the next notification is held, and shows per webhook.
    expect((await t.request('PUT', `/api/v1/webhook/${hook.id}`, { body: { name: 'Edited' } })).status).toBe(
      200,
    );
    await t.request('POST', '/api/v1/agent/report', {
      key: null,
      headers: { 'x-node-token': spoke.token },
      body: { tunnels: [{ key: 'hub', name: 'Hub', state: 'CONNECTED', peer_node_id: hub.id }] },
    });
    await t.jobsSettled();
    const held = await scrape(t);
    // Its peer is still UNREACHABLE: that one is suppressed, not held. The spoke's own change is not a tunnel.
    expect(valueOf(held, 'edgewatch_held_notifications', { webhook_id: hook.id })).toBeUndefined();
    await silence(t, spoke.id);
    await t.jobsSettled();
    const heldNow = await scrape(t);
    expect(valueOf(heldNow, 'edgewatch_held_notifications', { webhook_id: hook.id })).toBe(1);
    expect(
      count(heldNow, 'edgewatch_notifications_total', { status: 'held', reason: '' }),
    ).toBeGreaterThanOrEqual(1);
  });
});
