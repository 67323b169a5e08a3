import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BULK_IDS } from '../src/http/bulk.js';
import { expectError } from './support/error-shape.js';
import { aliveNode, silence as goSilent } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
import { holdRow, lockWaiters } from './support/locks.js';

// Bulk calls: many nodes in one request, one result per id.
let t: TestApp;
let east: string;
let west: string;
let eastOperator: { key: string };
let reader: { key: string };

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const UNKNOWN = '01900000-0000-7000-8000-00000000dead';

beforeAll(async () => {
  t = await startTestApp();
  east = (await t.request('POST', '/api/v1/org', { body: { name: 'East' } })).body.id as string;
  west = (await t.request('POST', '/api/v1/org', { body: { name: 'West' } })).body.id as string;
  eastOperator = await t.userWithRoles(['operator'], east);
  reader = await t.userWithRoles(['read_only']);
});
afterAll(async () => {
  await t.close();
});

async function registered(name: string, orgId: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/node', { body: { name, create_under: orgId } });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

const nodeCount = async () => (await t.request('GET', '/api/v2/node?size=1')).body.total_count as number;
const silenceCount = async () =>
  (await t.request('GET', '/api/v2/silence?size=1')).body.total_count as number;
const statuses = (body: any) => body.results.map((result: any) => [result.id, result.status]);

describe('POST /api/v1/node/delete', () => {
  it('removes each node it may, and says per id why it did not remove the others', async () => {
    const free = await registered('bulk-free', east);
    const watched = await registered('bulk-watched', east);
    const theirs = await registered('bulk-west', west);
    const alert = await t.request('POST', '/api/v1/mysubscriptions', {
      key: eastOperator.key,
      body: { name: 'Watch', type: 'NODE_STATE_CHANGE', settings: { org_id: east, node_id: watched } },
    });
    expect(alert.status, alert.text).toBe(201);

    const res = await t.request('POST', '/api/v1/node/delete', {
      key: eastOperator.key,
      body: { ids: [free, watched, theirs, UNKNOWN] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ succeeded: 1, failed: 3 });
    expect(statuses(res.body)).toEqual([
      [free, 200],
      [watched, 409],
      [theirs, 404],
      [UNKNOWN, 404],
    ]);
    expect(res.body.results[0].body).toEqual({ id: free, message: 'Node deleted.', status: 'SUCCESS' });
    expect(res.body.results[1].body).toMatchObject({ statusCode: 409, errorCode: 'CONFLICT' });
    expect(res.body.results[1].body.message).toContain('1 alert(s)');
    expect(res.body.results[2].body).toMatchObject({ statusCode: 404, errorCode: 'NOT_FOUND' });
    expect((await t.request('GET', `/api/v1/node/${free}`)).status).toBe(404);
    expect((await t.request('GET', `/api/v1/node/${watched}`)).status).toBe(200);
    expect((await t.request('GET', `/api/v1/node/${theirs}`)).status).toBe(200);

    const forced = await t.request('POST', '/api/v1/node/delete', {
      key: eastOperator.key,
      body: { ids: [watched], force: true },
    });
    expect(forced.body).toEqual({
      succeeded: 1,
      failed: 0,
      results: [
        {
          id: watched,
          status: 200,
          body: {
            id: watched,
            message: 'Node deleted with 1 alert(s).',
            status: 'SUCCESS',
            removed_alert_ids: [alert.body.id],
          },
        },
      ],
    });
    expect((await t.request('GET', `/api/v1/mysubscriptions/${alert.body.id}`)).status).toBe(404);
  });

  it('removes a node once when two calls race for it: the second finds it gone (404)', async () => {
    // Both calls are held at the node's row until both wait there; then the first to go removes it.
    const [id, other] = await Promise.all(['raced-a', 'raced-b'].map((n) => registered(n, east)));
    const release = await holdRow(t, 'nodes', id!);
    const calls = [[id!, other!], [id!]].map((ids) =>
      t.request('POST', '/api/v1/node/delete', { body: { ids } }),
    );
    await lockWaiters(t, 2);
    await release();
    const [first, second] = await Promise.all(calls);
    const answers = [first!, second!].map((res) => res.body.results.find((r: any) => r.id === id).status);
    expect(answers.sort()).toEqual([200, 404]);
    expect((await t.request('GET', `/api/v1/node/${other}`)).status).toBe(404);
  });

  it('refuses a malformed call whole, and a key without fleet:write, changing nothing', async () => {
    const id = await registered('bulk-kept', east);
    const before = await nodeCount();
    const tooMany = Array.from({ length: MAX_BULK_IDS + 1 }, (_, i) => `n-${i}`);
    const bad: [string, unknown][] = [
      ['no ids', {}],
      ['an empty list', { ids: [] }],
      ['an id twice', { ids: [id, id] }],
      ['too many ids', { ids: tooMany }],
      ['ids that are not a list', { ids: id }],
      ['an empty id', { ids: [''] }],
      ['force that is not a boolean', { ids: [id], force: 'yes' }],
      ['an extra field', { ids: [id], colour: 'red' }],
    ];
    for (const [label, body] of bad) {
      const res = await t.request('POST', '/api/v1/node/delete', { body });
      expect(res.status, `${label}: ${res.text}`).toBe(400);
      expectError(res, 400, 'BAD_REQUEST');
    }
    expectError(
      await t.request('POST', '/api/v1/node/delete', { key: reader.key, body: { ids: [id] } }),
      403,
      'FORBIDDEN',
    );
    expect(await nodeCount()).toBe(before);
  });
});

describe('POST /api/v1/silence with node_ids', () => {
  it('opens a window per node, and refuses per id the nodes it cannot cover', async () => {
    const one = await aliveNode(t, 'quiet-1', { orgId: east });
    const two = await aliveNode(t, 'quiet-2', { orgId: east });
    const theirs = await registered('quiet-west', west);
    const now = Date.now();
    const res = await t.request('POST', '/api/v1/silence', {
      body: {
        name: 'Racks',
        org_id: east,
        node_ids: [one.id, theirs, two.id, UNKNOWN],
        starts_at: iso(now),
        ends_at: iso(now + HOUR),
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ succeeded: 2, failed: 2 });
    expect(statuses(res.body)).toEqual([
      [one.id, 201],
      [theirs, 400],
      [two.id, 201],
      [UNKNOWN, 404],
    ]);
    expect(res.body.results[0].body).toMatchObject({ name: 'Racks', node_id: one.id, state: 'active' });
    expect(res.body.results[1].body).toMatchObject({
      statusCode: 400,
      details: [{ field: 'node_id', message: `is not in ${east} or below it` }],
    });

    await t.request('POST', '/api/v1/mysubscriptions', {
      body: {
        name: 'East down',
        type: 'NODE_STATE_CHANGE',
        settings: { org_id: east, alert_me: 'UNREACHABLE' },
      },
    });
    await goSilent(t, two.id);
    await t.jobsSettled();
    const [held] = (await t.request('GET', `/api/v2/notification?node_id=${two.id}`)).body.results;
    expect(held).toMatchObject({ status: 'suppressed', silence_id: res.body.results[2].body.id });
  });

  it('refuses a call that is wrong as a whole, creating no window', async () => {
    const node = await registered('quiet-3', east);
    const now = Date.now();
    const base = { name: 'W', org_id: east, node_ids: [node], starts_at: iso(now), ends_at: iso(now + HOUR) };
    const before = await silenceCount();
    const bad: [string, Record<string, unknown>, number][] = [
      ['node_id and node_ids', { ...base, node_id: node }, 400],
      ['no node', { ...base, node_ids: [] }, 400],
      ['a node twice', { ...base, node_ids: [node, node] }, 400],
      ['a window already over', { ...base, ends_at: iso(now - 1) }, 400],
      ['an organization out of reach', { ...base, org_id: 'nowhere' }, 404],
    ];
    for (const [label, body, status] of bad) {
      const res = await t.request('POST', '/api/v1/silence', { body });
      expect(res.status, `${label}: ${res.text}`).toBe(status);
    }
    expectError(
      await t.request('POST', '/api/v1/silence', { key: reader.key, body: base }),
      403,
      'FORBIDDEN',
    );
    expect(await silenceCount()).toBe(before);
  });
});
