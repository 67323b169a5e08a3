import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { down, up } from '../src/db/migrations/0021_node_sort.js';
import * as resourceCounts from '../src/db/migrations/0024_node_resource_counts.js';
import { naturalSortKey } from '../src/features/fleet/nodes/name-sort.js';
import { NODE_SORTS } from '../src/features/fleet/nodes/schemas.js';
import { expectError } from './support/error-shape.js';
import { aliveNode, silence } from './support/fleet.js';
import { dialect } from './support/database.js';
import { startTestApp, type TestApp } from './support/harness.js';
import { holdRow, lockWaiters } from './support/locks.js';

const naturally = (names: string[]) =>
  [...names].sort((a, b) => (naturalSortKey(a) < naturalSortKey(b) ? -1 : 1));

describe('naturalSortKey', () => {
  it('orders numbers by value and ignores case', () => {
    expect(naturally(['node-100', 'node-10', 'Node-2', 'node-1', 'NODE-20'])).toEqual([
      'node-1',
      'Node-2',
      'node-10',
      'NODE-20',
      'node-100',
    ]);
    expect(naturalSortKey('Edge-A')).toBe(naturalSortKey('edge-a'));
  });

  it('compares every run of digits, not only the last', () => {
    expect(naturally(['r10-n1', 'r2-n10', 'r2-n9', 'r1'])).toEqual(['r1', 'r2-n9', 'r2-n10', 'r10-n1']);
  });

  it('gives numbers that differ only in leading zeros the same key, and orders 0 first', () => {
    expect(naturalSortKey('edge-007')).toBe(naturalSortKey('edge-7'));
    expect(naturalSortKey('edge-000')).toBe(naturalSortKey('edge-0'));
    expect(naturally(['edge-8', 'edge-007', 'edge-0'])).toEqual(['edge-0', 'edge-007', 'edge-8']);
  });

  it('orders runs of any length by value, far past 20 digits', () => {
    const long = '9'.repeat(60);
    const longer = `1${'0'.repeat(60)}`;
    expect(naturally([longer, long, '99', '100'])).toEqual(['99', '100', long, longer]);
  });

  it('keeps digits before letters and a shorter name before its longer form', () => {
    expect(naturally(['node-b', 'node-2', 'node', 'node-a'])).toEqual(['node', 'node-2', 'node-a', 'node-b']);
  });
});

let t: TestApp;
let rootOrg: string;
const orgs: Record<string, string> = {};

/** Every node as the list shows it, in the order of `sort`, read page by page in pages of `size`. */
async function listed(sort: string | undefined, size = 100): Promise<Node[]> {
  const nodes: Node[] = [];
  for (let page = 0; ; page += 1) {
    const query = new URLSearchParams({ page: String(page), size: String(size) });
    if (sort !== undefined) query.set('sort', sort);
    const res = await t.request('GET', `/api/v2/node?${query.toString()}`);
    expect(res.status, res.text).toBe(200);
    nodes.push(...(res.body.results as Node[]));
    if (nodes.length >= (res.body.total_count as number)) return nodes;
  }
}

interface Node {
  id: string;
  name: string;
  node_state: 'NEW' | 'ALIVE' | 'UNREACHABLE';
  last_seen_at: string | null;
  organization: { id: string; name: string };
  tunnels: Record<string, number>;
  services: Record<string, number>;
  status: { node: { info: { version: { software_version: string | null } } } };
}

const names = (nodes: Node[]) => nodes.map((node) => node.name);
const versionOf = (node: Node) => node.status.node.info.version.software_version;
/** How many of the counted states are not `good`. */
const awayFrom = (counts: Record<string, number>, good: string) =>
  Object.entries(counts).reduce((sum, [state, n]) => sum + (state === good ? 0 : n), 0);

// The documented orders, written out once more in JavaScript: each ascending, before the final id.
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const neverSeenFirst = (a: Node, b: Node) => byText(a.last_seen_at ?? '', b.last_seen_at ?? '');
const EXPECTED: Record<string, (a: Node, b: Node) => number> = {
  name: (a, b) => byText(naturalSortKey(a.name), naturalSortKey(b.name)),
  state: (a, b) =>
    byText(a.node_state, b.node_state) || byText(naturalSortKey(a.name), naturalSortKey(b.name)),
  last_seen: neverSeenFirst,
  organization: (a, b) =>
    byText(a.organization.name, b.organization.name) ||
    byText(a.organization.id, b.organization.id) ||
    byText(naturalSortKey(a.name), naturalSortKey(b.name)),
  problems: (a, b) => byText(b.node_state, a.node_state) || neverSeenFirst(a, b),
  version: (a, b) =>
    byText(versionOf(a) ?? '', versionOf(b) ?? '') || byText(naturalSortKey(a.name), naturalSortKey(b.name)),
  tunnels: (a, b) =>
    awayFrom(a.tunnels, 'CONNECTED') - awayFrom(b.tunnels, 'CONNECTED') ||
    byText(naturalSortKey(a.name), naturalSortKey(b.name)),
  services: (a, b) =>
    awayFrom(a.services, 'HEALTHY') - awayFrom(b.services, 'HEALTHY') ||
    byText(naturalSortKey(a.name), naturalSortKey(b.name)),
};

function expectedOrder(sort: string, nodes: Node[]): string[] {
  const compare = EXPECTED[sort.replace(/^-/, '')]!;
  const sign = sort.startsWith('-') ? -1 : 1;
  return [...nodes].sort((a, b) => sign * (compare(a, b) || byText(a.id, b.id))).map((node) => node.id);
}

async function createOrg(name: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/org', { body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

async function register(name: string, orgId?: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/node', {
    body: { name, ...(orgId === undefined ? {} : { create_under: orgId }) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

function report(version: string, tunnels: string[], services: string[]) {
  return {
    software_version: version,
    tunnels: tunnels.map((state, i) => ({ key: `t${i}`, name: `T${i}`, state })),
    services: services.map((status, i) => ({ key: `s${i}`, name: `S${i}`, status })),
  };
}

beforeAll(async () => {
  t = await startTestApp({ background: false });
  rootOrg = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  orgs.beta = await createOrg('Beta');
  orgs.alpha = await createOrg('Alpha');
  // Silent first: these two report, then fall silent (UNREACHABLE), edge-9 the longer.
  await aliveNode(t, 'edge-9', { orgId: orgs.beta });
  await tick();
  await aliveNode(t, 'Edge-10', { orgId: orgs.alpha });
  await tick();
  await silence(t, (await aliveNode(t, 'edge-3')).id);
  // Then ALIVE ones, reporting one after the other, and NEW ones that never reported.
  // With versions, and tunnels and services some of which are down.
  const reports: Record<string, unknown> = {
    'node-100': report('2.0.0', ['CONNECTED', 'TERMINATED'], ['UNHEALTHY']),
    'node-2': report('1.9.0', ['TERMINATED', 'TERMINATED'], ['HEALTHY']),
    'node-1': report('2.0.0', ['CONNECTED'], ['UNHEALTHY', 'TERMINATED']),
  };
  for (const [name, orgId] of [
    ['node-100', orgs.alpha],
    ['node-2', orgs.beta],
    ['Node-10', undefined],
    ['node-1', orgs.alpha],
  ] as const) {
    await tick();
    await aliveNode(t, name, {
      ...(orgId === undefined ? {} : { orgId }),
      ...(reports[name] === undefined ? {} : { report: reports[name] }),
    });
  }
  await register('gw-20', orgs.beta);
  await register('gw-3');
  await register('GW-100', orgs.alpha);
});
afterAll(async () => {
  await t.close();
});

describe('GET /api/v2/node?sort=', () => {
  it('sorts names naturally, any case, both ways', async () => {
    const all = [
      'edge-3',
      'edge-9',
      'Edge-10',
      'gw-3',
      'gw-20',
      'GW-100',
      'node-1',
      'node-2',
      'Node-10',
      'node-100',
    ];
    expect(names(await listed('name'))).toEqual(all);
    expect(names(await listed('-name'))).toEqual([...all].reverse());
  });

  it('puts problems first: UNREACHABLE, NEW, ALIVE, the longest silent first within each', async () => {
    const nodes = await listed('problems');
    expect(nodes.map((node) => node.node_state)).toEqual([
      ...Array<string>(3).fill('UNREACHABLE'),
      ...Array<string>(3).fill('NEW'),
      ...Array<string>(4).fill('ALIVE'),
    ]);
    // The silent ones by their last report; the NEW ones never reported: in the order they were registered.
    expect(names(nodes)).toEqual([
      'edge-9',
      'Edge-10',
      'edge-3',
      'gw-20',
      'gw-3',
      'GW-100',
      'node-100',
      'node-2',
      'Node-10',
      'node-1',
    ]);
  });

  it('answers every order as documented, ascending and descending, with the same nodes', async () => {
    const everyNode = await listed(undefined);
    expect(everyNode).toHaveLength(10);
    for (const sort of NODE_SORTS) {
      const nodes = await listed(sort);
      expect(
        nodes.map((node) => node.id),
        sort,
      ).toEqual(expectedOrder(sort, everyNode));
    }
  });

  it('orders by state ALIVE, NEW, UNREACHABLE and by the time last seen, never seen first', async () => {
    const byState = await listed('state');
    expect(byState.map((node) => node.node_state)).toEqual([
      ...Array<string>(4).fill('ALIVE'),
      ...Array<string>(3).fill('NEW'),
      ...Array<string>(3).fill('UNREACHABLE'),
    ]);
    expect(names(byState).slice(0, 4)).toEqual(['node-1', 'node-2', 'Node-10', 'node-100']);
    const bySeen = await listed('last_seen');
    expect(bySeen.slice(0, 3).map((node) => node.last_seen_at)).toEqual([null, null, null]);
    expect(names(bySeen).slice(3, 5)).toEqual(['edge-9', 'Edge-10']);
    expect((await listed('-last_seen')).slice(-3).map((node) => node.last_seen_at)).toEqual([
      null,
      null,
      null,
    ]);
  });

  it("orders by the organization's name, then the node's", async () => {
    const nodes = await listed('organization');
    expect(nodes.map((node) => node.organization.id)).toEqual([
      ...Array<string>(4).fill(orgs.alpha!),
      ...Array<string>(3).fill(orgs.beta!),
      ...Array<string>(3).fill(rootOrg),
    ]);
    expect(names(nodes).slice(0, 4)).toEqual(['Edge-10', 'GW-100', 'node-1', 'node-100']);
  });

  it('keeps the default order by name as stored, then id', async () => {
    // Among names of one case, so that the database's collation cannot matter.
    const lowerCase = names(await listed(undefined)).filter((name) => name === name.toLowerCase());
    expect(lowerCase).toEqual(['edge-3', 'edge-9', 'gw-20', 'gw-3', 'node-1', 'node-100', 'node-2']);
  });

  it('reads the same order page by page as in one page, every node once', async () => {
    for (const sort of NODE_SORTS) {
      const whole = await listed(sort, 100);
      expect(
        (await listed(sort, 3)).map((node) => node.id),
        sort,
      ).toEqual(whole.map((node) => node.id));
    }
  });

  it('combines with filters: the total counts the matching nodes only', async () => {
    const res = await t.request('GET', `/api/v2/node?sort=problems&org_id=${orgs.alpha}&size=2`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.total_count).toBe(4);
    expect(names(res.body.results as Node[])).toEqual(['Edge-10', 'GW-100']);
    const alive = await t.request('GET', '/api/v2/node?sort=-name&node_state=ALIVE');
    expect(names(alive.body.results as Node[])).toEqual(['node-100', 'Node-10', 'node-2', 'node-1']);
  });

  it('refuses an order it does not know with 400 listing the accepted ones', async () => {
    for (const sort of ['bogus', 'NAME', '-problems', 'name,-state', '']) {
      const res = await t.request('GET', `/api/v2/node?sort=${encodeURIComponent(sort)}`);
      expectError(res, 400, 'BAD_REQUEST');
      expect(res.body.details, sort).toEqual([
        { field: 'sort', message: `must be one of: ${NODE_SORTS.map((s) => `"${s}"`).join(', ')}` },
      ]);
    }
  });

  it('sorts a renamed node by its new name', async () => {
    const id = await register('zz-5');
    expect(names(await listed('-name'))[0]).toBe('zz-5');
    const res = await t.request('PUT', `/api/v1/node/${id}`, { body: { name: 'aa-50' } });
    expect(res.status, res.text).toBe(200);
    const nodes = await listed('name');
    expect(names(nodes)[0]).toBe('aa-50');
    const stored = await t.ctx.db
      .selectFrom('nodes')
      .select('name_sort')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(stored.name_sort).toBe(naturalSortKey('aa-50'));
    await t.request('DELETE', `/api/v1/node/${id}`);
  });
});

describe('the counts behind the orders by tunnels and services', () => {
  it('follow the reports, and a tunnel forgotten while a report is applied', async () => {
    const node = await aliveNode(t, 'zz-counted', {
      report: report('1.0.0', ['CONNECTED', 'CONNECTED'], ['HEALTHY']),
    });
    const send = (body: unknown) =>
      t.request('POST', '/api/v1/agent/report', { key: null, headers: { 'x-node-token': node.token }, body });
    const stored = () =>
      t.ctx.db
        .selectFrom('nodes')
        .select(['tunnels_down', 'services_down'])
        .where('id', '=', node.id)
        .executeTakeFirstOrThrow();
    const tunnelsDown = async () =>
      (
        await t.ctx.db
          .selectFrom('tunnels')
          .select('id')
          .where('node_id', '=', node.id)
          .where('state', '<>', 'CONNECTED')
          .execute()
      ).length;
    expect(await stored()).toEqual({ tunnels_down: 0, services_down: 0 });
    expect((await send(report('1.0.0', ['TERMINATED', 'CONNECTED'], ['UNHEALTHY']))).status).toBe(200);
    expect(await stored()).toEqual({ tunnels_down: 1, services_down: 1 });

    // The down tunnel forgotten while a report of the node is applied, forced in between: the report has
    // read the node's tunnels and waits to write T1's new state (a transaction of the test holds T1's row;
    // on SQLite, the one writer) when the forget comes. The forget locks the node first, so it waits for
    // the report, and counts what the report left; else the report would count T0, gone meanwhile.
    const tunnels = (await t.request('GET', `/api/v2/tunnel?node_id=${node.id}`)).body.results as Node[];
    const [forgotten, changing] = ['T0', 'T1'].map((name) => tunnels.find((tunnel) => tunnel.name === name)!);
    const release = await holdRow(t, 'tunnels', changing!.id);
    const reported = send(report('1.0.0', ['TERMINATED', 'TERMINATED'], ['UNHEALTHY']));
    await lockWaiters(t, 1);
    const forgot = t.request('DELETE', `/api/v1/tunnel/${forgotten!.id}`);
    await lockWaiters(t, 2);
    await release();
    expect([(await forgot).status, (await reported).status]).toEqual([200, 200]);
    expect((await stored()).tunnels_down).toBe(await tunnelsDown());
    // On PostgreSQL the order is forced: the report, then the forget (on SQLite, the first to write).
    if (dialect === 'postgres') expect(await tunnelsDown()).toBe(1);
    await t.request('DELETE', `/api/v1/node/${node.id}?force=true`);
  });

  it('forgets a tunnel once when two forgets race: the second finds it gone (404) and counts nothing', async () => {
    const node = await aliveNode(t, 'zz-forgot', { report: report('1.0.0', ['TERMINATED'], ['HEALTHY']) });
    const [tunnel] = (await t.request('GET', `/api/v2/tunnel?node_id=${node.id}`)).body.results as Node[];
    const release = await holdRow(t, 'nodes', node.id);
    const forgets = [1, 2].map(() => t.request('DELETE', `/api/v1/tunnel/${tunnel!.id}`));
    await lockWaiters(t, 2);
    await release();
    expect((await Promise.all(forgets)).map((res) => res.status).sort()).toEqual([200, 404]);
    const stored = await t.ctx.db
      .selectFrom('nodes')
      .select('tunnels_down')
      .where('id', '=', node.id)
      .executeTakeFirstOrThrow();
    expect(stored.tunnels_down).toBe(0);
    await t.request('DELETE', `/api/v1/node/${node.id}`);
  });
});

describe('migrations 0021 and 0024', () => {
  it('fill in the key and the counts of every node already stored, and can be taken back', async () => {
    const db = t.ctx.db as unknown as Kysely<unknown>;
    const before = await t.ctx.db.selectFrom('nodes').select(['id', 'name_sort']).orderBy('id').execute();
    // The later one first: its indexes hold the key.
    await resourceCounts.down(db);
    await down(db);
    // More nodes than a batch, as stored before the migration: no key column yet.
    const template = await t.ctx.db
      .selectFrom('nodes')
      .selectAll()
      .where('name', '=', 'gw-3')
      .executeTakeFirstOrThrow();
    // Read after the column went: the row holds no key.
    const extra = Array.from({ length: 1_200 }, (_unused, i) => ({
      ...template,
      id: `${template.id}-${String(i).padStart(4, '0')}`,
      name: `bulk-${i}`,
      token_hash: `bulk-token-${i}`,
    }));
    for (let first = 0; first < extra.length; first += 200)
      await t.ctx.db
        .insertInto('nodes')
        .values(extra.slice(first, first + 200))
        .execute();
    await up(db);
    await resourceCounts.up(db);
    const after = await t.ctx.db
      .selectFrom('nodes')
      .select(['id', 'name', 'name_sort', 'tunnels_down', 'services_down'])
      .orderBy('id')
      .execute();
    const counted = (name: string) => after.find((row) => row.name === name)!;
    expect(counted('node-2')).toMatchObject({ tunnels_down: 2, services_down: 0 });
    expect(counted('node-1')).toMatchObject({ tunnels_down: 0, services_down: 2 });
    expect(after).toHaveLength(before.length + extra.length);
    for (const row of after) expect(row.name_sort, row.name).toBe(naturalSortKey(row.name));
    await t.ctx.db.deleteFrom('nodes').where('name', 'like', 'bulk-%').execute();
    expect(names(await listed('name')).slice(0, 2)).toEqual(['edge-3', 'edge-9']);
  });
});
