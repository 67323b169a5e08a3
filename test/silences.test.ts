import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { silenceEndJob } from '../src/features/silences/end-job.js';
import { Worker } from '../src/jobs/worker.js';
import { expectError } from './support/error-shape.js';
import { aliveNode, silence as goSilent } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';

// Maintenance windows: what they cover is stored as suppressed, and what still holds is told at their end.
let t: TestApp;
let root: string;
let east: string;
let operator: { key: string };
let reader: { key: string };
let eastOperator: { key: string };

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestApp();
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  east = (await t.request('POST', '/api/v1/org', { body: { name: 'East' } })).body.id as string;
  operator = await t.userWithRoles(['operator']);
  reader = await t.userWithRoles(['read_only']);
  eastOperator = await t.userWithRoles(['operator'], east);
});
afterAll(async () => {
  await t.close();
});

async function openWindow(body: Record<string, unknown>, key?: string) {
  const res = await t.request('POST', '/api/v1/silence', { body, ...(key === undefined ? {} : { key }) });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; state: string; ends_at: string };
}

async function alert(name: string, settings: Record<string, unknown>) {
  const res = await t.request('POST', '/api/v1/mysubscriptions', {
    body: { name, type: 'NODE_STATE_CHANGE', settings: { org_id: east, group_by: 'none', ...settings } },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

/** The window's end job, run on a clock past its end. */
async function endWindowsAt(at: number): Promise<number> {
  const ctx: AppContext = { ...t.ctx, clock: { now: () => at } };
  const worker = new Worker({
    db: t.ctx.db,
    queue: t.ctx.jobs,
    clock: ctx.clock,
    logger: t.ctx.logger,
    handlers: [silenceEndJob(ctx)],
    pollMs: 60_000,
    leaseMs: 60_000,
  });
  const ran = await worker.runDue();
  await t.jobsSettled();
  return ran;
}

const notificationsOf = async (nodeId: string) =>
  (await t.request('GET', `/api/v2/notification?node_id=${nodeId}`)).body.results as any[];

const mailsAbout = async (name: string) =>
  (await t.ctx.db.selectFrom('email_outbox').select('subject').execute()).filter((m) =>
    m.subject.includes(name),
  );

describe('the routes', () => {
  it('opens, lists, reads and ends windows, in the caller’s subtree', async () => {
    const now = Date.now();
    const active = await openWindow(
      {
        name: 'Rack move',
        org_id: east,
        types: ['NODE_STATE_CHANGE', 'TUNNEL_STATE_CHANGE'],
        starts_at: iso(now - 60_000),
        ends_at: String(now + HOUR),
        comment: 'Racks 3 and 4',
      },
      operator.key,
    );
    expect(active).toMatchObject({
      name: 'Rack move',
      org_id: east,
      include_child: true,
      node_id: null,
      types: ['NODE_STATE_CHANGE', 'TUNNEL_STATE_CHANGE'],
      comment: 'Racks 3 and 4',
      state: 'active',
      created_by: { id: expect.any(String) },
    });
    const upcoming = await openWindow({
      name: 'Later',
      org_id: root,
      include_child: 'false',
      starts_at: iso(now + HOUR),
      ends_at: iso(now + 2 * HOUR),
    });
    expect(upcoming).toMatchObject({ state: 'upcoming', include_child: false, types: null });

    const all = await t.request('GET', '/api/v2/silence');
    expect(all.body.total_count).toBe(2);
    expect(all.body.results.map((s: any) => s.id)).toEqual([upcoming.id, active.id]);
    expect(
      (await t.request('GET', '/api/v2/silence?state=active')).body.results.map((s: any) => s.id),
    ).toEqual([active.id]);
    // Read Only reads; East sees East's window only.
    expect((await t.request('GET', `/api/v1/silence/${active.id}`, { key: reader.key })).status).toBe(200);
    const fromEast = await t.request('GET', '/api/v2/silence', { key: eastOperator.key });
    expect(fromEast.body.results.map((s: any) => s.id)).toEqual([active.id]);
    expectError(
      await t.request('GET', `/api/v1/silence/${upcoming.id}`, { key: eastOperator.key }),
      404,
      'NOT_FOUND',
    );

    const cancelled = await t.request('DELETE', `/api/v1/silence/${upcoming.id}`);
    expect(cancelled.body.state).toBe('cancelled');
    expectError(await t.request('GET', `/api/v1/silence/${upcoming.id}`), 404, 'NOT_FOUND');
    const ended = await t.request('DELETE', `/api/v1/silence/${active.id}`, { key: operator.key });
    expect(ended.body.state).toBe('ended');
    expectError(await t.request('DELETE', `/api/v1/silence/${active.id}`), 409, 'CONFLICT');
    await t.jobsSettled();
  });

  it('refuses bad windows, scopes outside the caller’s reach, and Read Only', async () => {
    const now = Date.now();
    const base = { name: 'W', org_id: east, starts_at: iso(now), ends_at: iso(now + HOUR) };
    const before = (await t.request('GET', '/api/v2/silence')).body.total_count;
    const bad: [string, Record<string, unknown>, number, string, string?][] = [
      ['ends before it starts', { ...base, ends_at: iso(now - 1) }, 400, 'BAD_REQUEST'],
      [
        'already over',
        { ...base, starts_at: iso(now - 2 * HOUR), ends_at: iso(now - HOUR) },
        400,
        'BAD_REQUEST',
      ],
      ['a time that is no time', { ...base, starts_at: 'soon' }, 400, 'BAD_REQUEST'],
      ['an unknown type', { ...base, types: ['DISK_FULL'] }, 400, 'BAD_REQUEST'],
      ['no types at all', { ...base, types: [] }, 400, 'BAD_REQUEST'],
      ['an extra field', { ...base, colour: 'red' }, 400, 'BAD_REQUEST'],
      ['no name', { ...base, name: undefined }, 400, 'BAD_REQUEST'],
      ['an unknown organization', { ...base, org_id: 'nowhere' }, 404, 'NOT_FOUND'],
      ['an unknown node', { ...base, node_id: 'nowhere' }, 404, 'NOT_FOUND'],
    ];
    for (const [label, body, status, code] of bad) {
      const res = await t.request('POST', '/api/v1/silence', { body });
      expect(res.status, `${label}: ${res.text}`).toBe(status);
      expectError(res, status, code);
    }
    const rootNode = await aliveNode(t, 'root-only');
    expectError(
      await t.request('POST', '/api/v1/silence', { body: { ...base, node_id: rootNode.id } }),
      400,
      'BAD_REQUEST',
    );
    expectError(
      await t.request('POST', '/api/v1/silence', { body: { ...base, org_id: root }, key: eastOperator.key }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await t.request('POST', '/api/v1/silence', { body: base, key: reader.key }),
      403,
      'FORBIDDEN',
    );
    expect((await t.request('GET', '/api/v2/silence')).body.total_count).toBe(before);
    const mine = await openWindow(base);
    expectError(
      await t.request('DELETE', `/api/v1/silence/${mine.id}`, { key: reader.key }),
      403,
      'FORBIDDEN',
    );
    await t.request('DELETE', `/api/v1/silence/${mine.id}`);
    await t.jobsSettled();
  });
});

describe('a window at work', () => {
  it('holds back a node that goes down and stays down, and tells it once at the end', async () => {
    const down = await alert('East down', { alert_me: 'UNREACHABLE' });
    const node = await aliveNode(t, 'east-rack-1', { orgId: east });
    const now = Date.now();
    const window = await openWindow({
      name: 'Rack 1',
      org_id: east,
      node_id: node.id,
      starts_at: iso(now),
      ends_at: iso(now + HOUR),
    });
    await goSilent(t, node.id);
    await t.jobsSettled();
    const [held] = await notificationsOf(node.id);
    expect(held).toMatchObject({ status: 'suppressed', reason: 'maintenance', silence_id: window.id });
    expect(held.alert.id).toBe(down);
    expect(await mailsAbout('east-rack-1')).toEqual([]);

    expect(await endWindowsAt(now + HOUR + 1)).toBe(1);
    const [told] = await notificationsOf(node.id);
    expect(told).toMatchObject({ id: held.id, status: 'delivered', reason: null, silence_id: window.id });
    expect(await mailsAbout('east-rack-1')).toHaveLength(1);
  });

  it('tells nothing of a node that came back inside the window', async () => {
    await alert('East up and down', { alert_me: 'ALIVE,UNREACHABLE' });
    const node = await aliveNode(t, 'east-rack-2', { orgId: east });
    await t.jobsSettled();
    // Its first report (ALIVE) was told before the window opened.
    const toldBefore = (await mailsAbout('east-rack-2')).length;
    const seenBefore = (await notificationsOf(node.id)).length;
    const now = Date.now();
    await openWindow({
      name: 'Rack 2',
      org_id: east,
      node_id: node.id,
      starts_at: iso(now),
      ends_at: iso(now + HOUR),
    });
    await goSilent(t, node.id);
    const back = await t.request('POST', '/api/v1/agent/report', {
      key: null,
      headers: { 'x-node-token': node.token },
    });
    expect(back.status).toBe(200);
    await t.jobsSettled();
    const since = async () => (await notificationsOf(node.id)).slice(0, -seenBefore);
    // Down and back up, for both East alerts that watch it: all held back.
    expect((await since()).map((n) => [n.condition, n.status]).sort()).toEqual([
      ['ALIVE', 'suppressed'],
      ['UNREACHABLE', 'suppressed'],
      ['UNREACHABLE', 'suppressed'],
    ]);

    await endWindowsAt(now + HOUR + 1);
    expect(await mailsAbout('east-rack-2')).toHaveLength(toldBefore);
    expect((await since()).map((n) => n.status)).toEqual(['suppressed', 'suppressed', 'suppressed']);
  });

  it('sends what still holds at once when the window is ended early', async () => {
    const node = await aliveNode(t, 'east-rack-3', { orgId: east });
    const now = Date.now();
    const window = await openWindow({
      name: 'Rack 3',
      org_id: east,
      types: ['NODE_STATE_CHANGE'],
      starts_at: iso(now),
      ends_at: iso(now + HOUR),
    });
    await t.jobsSettled();
    const toldBefore = (await mailsAbout('east-rack-3')).length;
    await goSilent(t, node.id);
    await t.jobsSettled();
    const unreachable = async () =>
      (await notificationsOf(node.id)).filter((n) => n.condition === 'UNREACHABLE').map((n) => n.status);
    expect(await unreachable()).toEqual(['suppressed', 'suppressed']);
    const ended = await t.request('DELETE', `/api/v1/silence/${window.id}`);
    expect(ended.body.state).toBe('ended');
    await t.jobsSettled();
    // Both alerts of East watch UNREACHABLE; each gets its one notification.
    expect(await unreachable()).toEqual(['delivered', 'delivered']);
    expect(await mailsAbout('east-rack-3')).toHaveLength(toldBefore + 2);
  });
});
