import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliveNode, until } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
import type { ReceiverHandler } from './support/https-receiver.js';
import {
  correctEndpoint,
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// Backoff per webhook, not per message: a burst that fails together counts once, then nothing goes to the
// webhook until its retry time, and then one request at a time probes it; a success resumes all.
let t: TestApp;
let endpoint: ReceiverWithSecret;
let orgId: string;
let failing = true;
let inFlight = 0;
const starts: { at: number; inFlight: number }[] = [];

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  const correct = correctEndpoint(() => endpoint.secret.value);
  const slowAndFlaky: ReceiverHandler = async (request, response) => {
    if (request.method !== 'POST') return correct(request, response);
    inFlight += 1;
    starts.push({ at: Date.now(), inFlight });
    await new Promise((resolve) => setTimeout(resolve, 40));
    inFlight -= 1;
    if (!failing) return correct(request, response);
    response.writeHead(503, { 'content-type': 'text/plain' });
    response.end('busy');
  };
  endpoint.receiver.handle(slowAndFlaky);
  const access = receiverAccess();
  t = await startTestApp({
    ...access,
    env: { ...access.env, DELIVERY_RETRY_SCHEDULE: '300ms', JOB_POLL_INTERVAL_MS: '20' },
  });
  orgId = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

describe('one probe at a time', () => {
  it('counts a failing burst once, then probes one request at a time until a success resumes all', async () => {
    const hook = await enabledWebhook(t, endpoint);
    const created = await t.request('POST', '/api/v1/mysubscriptions', {
      body: {
        name: 'Tunnels',
        type: 'TUNNEL_STATE_CHANGE',
        settings: { org_id: orgId },
        channel_type: 'webhook',
        channel_id: hook.id,
      },
    });
    expect(created.status, created.text).toBe(201);
    // One report with five new tunnels: five notifications at once.
    const tunnels = Array.from({ length: 5 }, (_, i) => ({
      key: `t${i}`,
      name: `T${i}`,
      state: 'CONNECTED',
    }));
    const node = await aliveNode(t, 'busy-peer', { report: { tunnels } });
    const failures = async () =>
      (
        await t.ctx.db
          .selectFrom('webhooks')
          .select('consecutive_failures')
          .where('id', '=', hook.id)
          .executeTakeFirstOrThrow()
      ).consecutive_failures;
    // The five go out together and fail together: one failure, then a probe after the 300 ms wait.
    await until('the first probe', () => starts.length >= 6);
    expect(Math.max(...starts.slice(0, 5).map((start) => start.inFlight))).toBeGreaterThan(1);
    expect(await failures()).toBe(1);
    expect(starts[5]!.at - starts[4]!.at).toBeGreaterThanOrEqual(200);
    await until('three counted failures', async () => (await failures()) >= 3);
    // After the burst, never two at once: each later request is a lone probe.
    expect(starts.slice(5).every((start) => start.inFlight === 1)).toBe(true);

    failing = false;
    await until('every notification delivered', async () => {
      const list = await t.request(
        'GET',
        `/api/v2/notification?node_id=${node.id}&alert_id=${created.body.id}`,
      );
      return (
        list.body.total_count === 5 &&
        list.body.results.every((n: { status: string }) => n.status === 'delivered')
      );
    });
    expect(await failures()).toBe(0);
  });
});
