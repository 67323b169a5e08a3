import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { alertCheckJob } from '../src/features/notifications/check-job.js';
import { Worker } from '../src/jobs/worker.js';
import { expectError } from './support/error-shape.js';
import { aliveNode, silence } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';

// A hub node goes UNREACHABLE: its own alert tells it once; the tunnels that lead to it and its services,
// whose alerts would fire too, are stored as suppressed with the reason, not sent.
let t: TestApp;
let root: string;

beforeAll(async () => {
  t = await startTestApp();
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
});
afterAll(async () => {
  await t.close();
});

async function alert(name: string, type: string, settings: Record<string, unknown>) {
  const res = await t.request('POST', '/api/v1/mysubscriptions', {
    body: { name, type, settings: { org_id: root, group_by: 'none', ...settings } },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; settings: Record<string, string> };
}

const report = (token: string, body: unknown) =>
  t.request('POST', '/api/v1/agent/report', { key: null, headers: { 'x-node-token': token }, body });

describe('topology-aware suppression', () => {
  it('tells a node going UNREACHABLE once and suppresses its 20 consequences, visibly', async () => {
    const hubDown = await alert('Hub down', 'NODE_STATE_CHANGE', { alert_me: 'UNREACHABLE' });
    const tunnels = await alert('Tunnels down', 'TUNNEL_STATE_CHANGE', { alert_me: 'TERMINATED' });
    const services = await alert('Services sick', 'SERVICE_STATE_CHANGE', {
      alert_me: 'UNHEALTHY',
      duration: 1,
    });
    expect(tunnels.settings.suppress_when_node_unreachable).toBe('true');
    expect(hubDown.settings.suppress_when_node_unreachable).toBeUndefined();

    const serviceList = (status: string) =>
      Array.from({ length: 10 }, (_, k) => ({ key: `svc-${k}`, name: `Service ${k}`, status }));
    const hub = await aliveNode(t, 'hub', { report: { services: serviceList('HEALTHY') } });
    expect((await report(hub.token, { services: serviceList('UNHEALTHY') })).status).toBe(200);
    const spokes = [];
    for (let k = 0; k < 10; k += 1) {
      const tunnel = { key: 'to-hub', name: 'To the hub', state: 'CONNECTED', peer_node_id: hub.id };
      spokes.push(await aliveNode(t, `spoke-${k}`, { report: { tunnels: [tunnel] } }));
    }
    // One spoke's owner wants its tunnel whatever the hub's state.
    const loud = await alert('Spoke 0, always', 'TUNNEL_STATE_CHANGE', {
      alert_me: 'TERMINATED',
      node_id: spokes[0]!.id,
      suppress_when_node_unreachable: false,
    });
    expect(loud.settings.suppress_when_node_unreachable).toBe('false');

    const judged = await silence(t, hub.id);
    for (const spoke of spokes) {
      const res = await report(spoke.token, {
        tunnels: [{ key: 'to-hub', name: 'To the hub', state: 'TERMINATED', peer_node_id: hub.id }],
      });
      expect(res.status, res.text).toBe(200);
    }
    // The services' one-minute checks run once the hub has been UNREACHABLE a while.
    const ctx: AppContext = { ...t.ctx, clock: { now: () => judged + 2 * 60_000 } };
    const worker = new Worker({
      db: t.ctx.db,
      queue: t.ctx.jobs,
      clock: ctx.clock,
      logger: t.ctx.logger,
      handlers: [alertCheckJob(ctx)],
      pollMs: 60_000,
      leaseMs: 60_000,
    });
    expect(await worker.runDue()).toBe(10);
    await t.jobsSettled();

    const list = async (query: string) =>
      (await t.request('GET', `/api/v2/notification?size=100&${query}`)).body as {
        total_count: number;
        results: any[];
      };
    const down = await list(`alert_id=${hubDown.id}`);
    expect(down.results.map((n) => [n.node.id, n.condition, n.status])).toEqual([
      [hub.id, 'UNREACHABLE', 'delivered'],
    ]);
    const suppressed = await list('status=suppressed');
    expect(suppressed.total_count).toBe(20);
    expect(new Set(suppressed.results.map((n) => n.reason))).toEqual(new Set(['node_unreachable']));
    expect(suppressed.results.filter((n) => n.alert.id === tunnels.id)).toHaveLength(10);
    expect(suppressed.results.filter((n) => n.alert.id === services.id)).toHaveLength(10);
    // The switch: the spoke's own alert was sent.
    expect((await list(`alert_id=${loud.id}`)).results.map((n) => n.status)).toEqual(['delivered']);
    // Nothing went out for the suppressed ones: one e-mail for the hub, one for the loud spoke.
    const mails = await t.ctx.db.selectFrom('email_outbox').select('subject').execute();
    expect(
      mails.filter((m) => m.subject.includes('TERMINATED') || m.subject.includes('UNHEALTHY')),
    ).toHaveLength(1);
  });

  it('is switched per alert, and refuses a value that is not a boolean', async () => {
    const created = await alert('Services, switchable', 'SERVICE_STATE_CHANGE', {});
    const off = await t.request('PUT', `/api/v1/mysubscriptions/${created.id}`, {
      body: { settings: { suppress_when_node_unreachable: 'false' } },
    });
    expect(off.status, off.text).toBe(200);
    expect(off.body.settings.suppress_when_node_unreachable).toBe('false');
    const kept = await t.request('PUT', `/api/v1/mysubscriptions/${created.id}`, {
      body: { name: 'Renamed' },
    });
    expect(kept.body.settings.suppress_when_node_unreachable).toBe('false');
    const bad = await t.request('POST', '/api/v1/mysubscriptions', {
      body: {
        name: 'Bad',
        type: 'TUNNEL_STATE_CHANGE',
        settings: { org_id: root, suppress_when_node_unreachable: 'maybe' },
      },
    });
    expectError(bad, 400, 'BAD_REQUEST');
  });
});
