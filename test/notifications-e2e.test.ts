import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { expiryJobs } from '../src/features/fleet/expiry/jobs.js';
import { alertCheckJob } from '../src/features/notifications/check-job.js';
import { Worker } from '../src/jobs/worker.js';
import { verifySignature } from '../src/receiver/index.js';
import { aliveNode, silence, until } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';
import {
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// From an agent's report to a signed notification received and an e-mail in the sink: the real path.
let t: TestApp;
let endpoint: ReceiverWithSecret;
let smtp: SmtpSink;
let hook: { id: string; secret: string };
let root: string;
let east: string;
let west: string;
const TUNNELS = { tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED' }] };

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  smtp = await startSmtpSink();
  const access = receiverAccess();
  t = await startTestApp({ ...access, env: { ...access.env, SMTP_URL: smtp.url } });
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  east = (await t.request('POST', '/api/v1/org', { body: { name: 'East' } })).body.id as string;
  west = (await t.request('POST', '/api/v1/org', { body: { name: 'West' } })).body.id as string;
  hook = await enabledWebhook(t, endpoint);
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
  await smtp.close();
});

async function alert(name: string, type: string, settings: Record<string, unknown>, webhook = true) {
  const res = await t.request('POST', '/api/v1/mysubscriptions', {
    body: {
      name,
      type,
      // One notification sent per event (incidents are tested on their own).
      settings: { group_by: 'none', ...settings },
      ...(webhook ? { channel_type: 'webhook', channel_id: hook.id } : {}),
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

function notificationsTo(nodeId: string) {
  return endpoint.receiver.requests
    .filter((request) => request.method === 'POST')
    .map((request) => ({ request, body: JSON.parse(request.body) as Record<string, any> }))
    .filter(({ body }) => body.node?.id === nodeId);
}

describe('an event becomes notifications', () => {
  it('sends one signed notification per matching alert, by webhook and e-mail, and none to the others', async () => {
    const node = await aliveNode(t, 'edge-east-1', { orgId: east, report: TUNNELS });
    const other = await aliveNode(t, 'edge-east-2', { orgId: east, report: TUNNELS });
    const matching = await alert('East down', 'NODE_STATE_CHANGE', { org_id: east, alert_me: 'UNREACHABLE' });
    const fromRoot = await alert('Anything down', 'NODE_STATE_CHANGE', {
      org_id: root,
      alert_me: 'UNREACHABLE',
    });
    const byMail = await alert('East down, by mail', 'NODE_STATE_CHANGE', { org_id: east }, false);
    await alert('Only ALIVE', 'NODE_STATE_CHANGE', { org_id: east, alert_me: 'ALIVE' });
    await alert('Root only', 'NODE_STATE_CHANGE', { org_id: root, include_child: false });
    await alert('West', 'NODE_STATE_CHANGE', { org_id: west });
    await alert('The other node', 'NODE_STATE_CHANGE', { org_id: east, node_id: other.id });
    await alert('Tunnels', 'TUNNEL_STATE_CHANGE', { org_id: east });

    await silence(t, node.id);
    await until('two notifications at the receiver', () => notificationsTo(node.id).length >= 2);
    await t.jobsSettled();
    const received = notificationsTo(node.id);
    expect(received.map(({ body }) => body.alert.id).sort()).toEqual([matching, fromRoot].sort());
    for (const { request, body } of received) {
      const verdict = verifySignature(hook.secret, {
        body: request.body,
        timestamp: String(request.headers['x-service-timestamp']),
        signature: request.headers['x-service-signature'] as string,
      });
      expect(verdict.ok).toBe(true);
      expect(request.headers['x-service-delivery']).toEqual(expect.any(String));
      expect(body).toMatchObject({
        type: 'NODE_STATE_CHANGE',
        display_type: 'Node state change',
        condition: 'UNREACHABLE',
        sequence: 2,
        organization: { id: east, name: 'East' },
        node: { id: node.id, name: 'edge-east-1' },
        resource: { kind: 'node', id: node.id, name: 'edge-east-1' },
        previous_state: 'ALIVE',
        current_state: 'UNREACHABLE',
        message: 'Node edge-east-1 is UNREACHABLE (was ALIVE).',
        test: false,
      });
    }
    const mail = await smtp.waitFor((email) => email.subject.includes('edge-east-1 is UNREACHABLE'));
    expect(mail.subject).toBe('Node edge-east-1 is UNREACHABLE (was ALIVE) (East)');
    expect(mail.text).toContain('Organization: East');
    expect(mail.text).toMatch(/^Node: +edge-east-1$/m);
    expect(mail.text).toMatch(/Details: http:\/\/edgewatch\.test\/#\/notifications\/\S+/);

    const list = await t.request('GET', `/api/v2/notification?node_id=${node.id}`);
    expect(list.status, list.text).toBe(200);
    expect(list.body.total_count).toBe(3);
    expect(list.body.results.map((n: any) => n.status)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(list.body.results.map((n: any) => n.alert.id).sort()).toEqual([matching, fromRoot, byMail].sort());
  });

  it('honours a duration: a shorter flap sends nothing, a held condition sends once', async () => {
    const flapping = await aliveNode(t, 'flapping', { orgId: west });
    const steady = await aliveNode(t, 'steady-down', { orgId: west });
    const slow = await alert('West down for 5 min', 'NODE_STATE_CHANGE', {
      org_id: west,
      alert_me: 'UNREACHABLE',
      duration: 5,
    });
    const flappedAt = await silence(t, flapping.id);
    const downAt = await silence(t, steady.id);
    // The flapping node reports again before the five minutes are up.
    await t.request('POST', '/api/v1/agent/report', {
      key: null,
      headers: { 'x-node-token': flapping.token },
    });

    const later = Math.max(flappedAt, downAt) + 5 * 60_000;
    const ctx: AppContext = { ...t.ctx, clock: { now: () => later } };
    const worker = new Worker({
      db: t.ctx.db,
      queue: t.ctx.jobs,
      clock: ctx.clock,
      logger: t.ctx.logger,
      handlers: [alertCheckJob(ctx)],
      pollMs: 60_000,
      leaseMs: 60_000,
    });
    expect(await worker.runDue()).toBe(2);
    expect(await worker.runDue()).toBe(0);
    const fromSlow = (nodeId: string) => notificationsTo(nodeId).filter(({ body }) => body.alert.id === slow);
    await until('the held condition at the receiver', () => fromSlow(steady.id).length >= 1);
    await t.jobsSettled();
    expect(fromSlow(steady.id)).toHaveLength(1);
    expect(fromSlow(flapping.id)).toEqual([]);
  });

  it('notifies each of the seven types, from real reports, the sweep and the expiry checks', async () => {
    const created = await t.request('POST', '/api/v1/node', {
      body: { name: 'every-type', create_under: east, max_headless_time: 10 },
    });
    const node = { id: created.body.id as string, token: created.body.token as string };
    const types = [
      'NODE_STATE_CHANGE',
      'TUNNEL_STATE_CHANGE',
      'SERVICE_STATE_CHANGE',
      'NODE_IP_CHANGE',
      'CERT_EXPIRY',
      'HEADLESS_EXPIRY',
      'NODE_UPGRADE',
    ];
    for (const type of types) await alert(`Every ${type}`, type, { org_id: east, node_id: node.id }, false);
    const report = (body: unknown) =>
      t.request('POST', '/api/v1/agent/report', { key: null, headers: { 'x-node-token': node.token }, body });
    await report({
      addresses: [{ type: 'ExternalIP', address: '203.0.113.5' }],
      upgrade: { status: 'ENABLED' },
      software_version: '1.0.0',
      // 80 % of this certificate's validity has passed: its first check is due at once.
      certificate: { not_before: '2017-01-01T00:00:00Z', not_after: '2027-06-01T00:00:00Z' },
      tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED' }],
      services: [{ key: 'db', name: 'Database', status: 'HEALTHY' }],
    });
    await report({
      addresses: [{ type: 'ExternalIP', address: '203.0.113.6' }],
      upgrade: { status: 'SUCCESSFUL' },
      software_version: '1.1.0',
    });
    await t.jobsSettled();
    const judged = await silence(t, node.id);
    const ctx: AppContext = { ...t.ctx, clock: { now: () => judged + 8 * 60_000 } };
    const worker = new Worker({
      db: t.ctx.db,
      queue: t.ctx.jobs,
      clock: ctx.clock,
      logger: t.ctx.logger,
      handlers: expiryJobs(ctx),
      pollMs: 60_000,
      leaseMs: 60_000,
    });
    expect(await worker.runDue()).toBe(1);
    await t.jobsSettled();
    const list = await t.request('GET', `/api/v2/notification?node_id=${node.id}&size=100`);
    const seen = new Set(list.body.results.map((n: { type: string }) => n.type));
    expect([...seen].sort()).toEqual([...types].sort());
  });

  it('names the node, the tunnel or service, and the organization in the e-mail and the list', async () => {
    // A user of its own: the administrator's e-mails of this minute may already be going out as a digest.
    const owner = await t.userWithRoles(['operator'], west);
    const created = await t.request('POST', '/api/v1/mysubscriptions', {
      key: owner.key,
      body: {
        name: 'West services, by mail',
        type: 'SERVICE_STATE_CHANGE',
        settings: { org_id: west, group_by: 'none' },
      },
    });
    expect(created.status, created.text).toBe(201);
    const node = await aliveNode(t, 'edge-west-9', {
      orgId: west,
      report: { services: [{ key: 'db', name: 'Database', status: 'HEALTHY' }] },
    });
    const mail = await smtp.waitFor((email) =>
      email.subject.includes('Service Database of node edge-west-9'),
    );
    expect(mail.subject).toBe('Service Database of node edge-west-9 is HEALTHY (West)');
    expect(mail.text).toMatch(/^Node: +edge-west-9$/m);
    expect(mail.text).toMatch(/^Service: +Database$/m);
    expect(mail.text).toMatch(/^Organization: +West$/m);
    const list = await t.request('GET', `/api/v2/notification?node_id=${node.id}`, { key: owner.key });
    expect(list.body.results[0]).toMatchObject({
      organization: { id: west, name: 'West' },
      node: { id: node.id, name: 'edge-west-9' },
      resource: { kind: 'service', name: 'Database' },
    });
  });
});
