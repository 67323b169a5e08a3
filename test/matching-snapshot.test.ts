import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { App } from '../src/http/types.js';
import { closeContext, openContext } from '../src/runtime.js';
import type { AppContext } from '../src/context.js';
import { aliveNode } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';

// Each process keeps the alerts and maintenance windows it matches events against, and reads them again
// only when their version moved (features/notifications/matching-snapshot.ts). Here one process (`other`)
// applies the reports and keeps its snapshot, while the changes are made through another: every change,
// including a cascade, must reach its next report. Without the triggers of migration 0026 each step fails.
let t: TestApp;
let other: { ctx: AppContext; app: App };
let root: string;

beforeAll(async () => {
  t = await startTestApp({ background: false });
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  const schema = t.database.schema;
  const ctx = await openContext(t.config, t.ctx.logger, schema === undefined ? {} : { schema });
  const app = await buildApp(ctx);
  await app.ready();
  other = { ctx, app };
});
afterAll(async () => {
  await other.app.close();
  await closeContext(other.ctx);
  await t.close();
});

const UP = { tunnels: [{ key: 'wg0', name: 'wg0', state: 'CONNECTED' }] };
const tunnelStates = new Map<string, string>();

/** The node's tunnel goes down (up first when it is down), reported to the other process. */
async function tunnelGoesDown(token: string): Promise<void> {
  const down = tunnelStates.get(token) === 'TERMINATED';
  for (const next of down ? ['CONNECTED', 'TERMINATED'] : ['TERMINATED']) {
    const res = await other.app.inject({
      method: 'POST',
      url: '/api/v1/agent/report',
      headers: { 'x-node-token': token },
      payload: { tunnels: [{ key: 'wg0', name: 'wg0', state: next }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    tunnelStates.set(token, next);
  }
}

async function notificationsOf(nodeId: string) {
  return t.ctx.db
    .selectFrom('notifications')
    .select(['alert_id', 'status', 'reason'])
    .where('node_id', '=', nodeId)
    .where('condition', '=', 'TERMINATED')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

async function alertOn(nodeId: string, key?: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/mysubscriptions', {
    ...(key === undefined ? {} : { key }),
    body: {
      name: 'Tunnel down',
      type: 'TUNNEL_STATE_CHANGE',
      settings: { org_id: root, node_id: nodeId, alert_me: 'TERMINATED', group_by: 'none' },
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

describe('what events are matched against, kept per process', () => {
  it('sees every change another process made at its next report: an alert made, edited, removed; a window', async () => {
    const node = await aliveNode(t, 'matched', { report: UP });
    await tunnelGoesDown(node.token);
    expect(await notificationsOf(node.id)).toEqual([]);

    const alertId = await alertOn(node.id);
    await tunnelGoesDown(node.token);
    expect(await notificationsOf(node.id)).toEqual([{ alert_id: alertId, status: 'pending', reason: null }]);

    const edited = await t.request('PUT', `/api/v1/mysubscriptions/${alertId}`, {
      body: { settings: { org_id: root, node_id: node.id, alert_me: 'CONNECTED' } },
    });
    expect(edited.status, edited.text).toBe(200);
    await tunnelGoesDown(node.token);
    expect(await notificationsOf(node.id)).toHaveLength(1);

    await t.request('PUT', `/api/v1/mysubscriptions/${alertId}`, {
      body: { settings: { org_id: root, node_id: node.id, alert_me: 'TERMINATED' } },
    });
    const now = Date.now();
    const window = await t.request('POST', '/api/v1/silence', {
      body: {
        name: 'Works',
        org_id: root,
        node_id: node.id,
        starts_at: new Date(now - 60_000).toISOString(),
        ends_at: new Date(now + 3_600_000).toISOString(),
      },
    });
    expect(window.status, window.text).toBe(201);
    await tunnelGoesDown(node.token);
    expect((await notificationsOf(node.id)).at(-1)).toMatchObject({
      status: 'suppressed',
      reason: 'maintenance',
    });

    expect((await t.request('DELETE', `/api/v1/silence/${window.body.id}`)).status).toBe(200);
    expect((await t.request('DELETE', `/api/v1/mysubscriptions/${alertId}`)).status).toBe(200);
    const before = (await notificationsOf(node.id)).length;
    await tunnelGoesDown(node.token);
    expect(await notificationsOf(node.id)).toHaveLength(before);
  });

  it("drops a removed user's alerts, removed with them by the database, from the next report", async () => {
    const node = await aliveNode(t, 'orphaned', { report: UP });
    const user = await t.userWithRoles(['operator']);
    await alertOn(node.id, user.key);
    await tunnelGoesDown(node.token);
    expect(await notificationsOf(node.id)).toHaveLength(1);

    expect((await t.request('DELETE', `/api/v1/user/${user.id}?force=true`)).status).toBe(200);
    // The alert went with its owner by the foreign key's cascade; a report matching it still would fail.
    await tunnelGoesDown(node.token);
    expect(await notificationsOf(node.id)).toEqual([]);
  });
});
