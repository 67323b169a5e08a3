import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/lib/tokens.js';
import { expectError } from './support/error-shape.js';
import { ADMIN_KEY, startTestApp, type RequestOptions, type TestApp } from './support/harness.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NODE_FIELDS = [
  'certificate',
  'created_at',
  'hardware_serial_number',
  'headless_expires_at',
  'id',
  'last_seen_at',
  'max_headless_time',
  'metadata',
  'name',
  'node_state',
  'organization',
  'resource_states',
  'services',
  'state_since',
  'status',
  'tunnels',
  'upgrade',
];

let t: TestApp;
let rootOrg: string;
let east: string;
let eastLab: string;
let west: string;
let eastOperator: { key: string };
let reader: { key: string };

async function createOrg(name: string, parentId?: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/org', {
    body: { name, ...(parentId === undefined ? {} : { parent_id: parentId }) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

async function register(body: Record<string, unknown>, key = ADMIN_KEY) {
  const res = await t.request('POST', '/api/v1/node', { key, body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function nodeRows() {
  return t.ctx.db.selectFrom('nodes').selectAll().orderBy('id').execute();
}

beforeAll(async () => {
  t = await startTestApp();
  rootOrg = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  east = await createOrg('East');
  eastLab = await createOrg('East lab', east);
  west = await createOrg('West');
  eastOperator = await t.userWithRoles(['operator'], east);
  reader = await t.userWithRoles(['read_only']);
});
afterAll(async () => {
  await t.close();
});

describe('POST /api/v1/node', () => {
  it('registers a NEW node and shows its token once, stored only as a hash', async () => {
    const node = await register({
      name: 'edge-001',
      hardware_serial_number: 'SN-001',
      create_under: east,
      max_headless_time: 120,
      metadata: { labels: { site: 'berlin', rack: '4' } },
    });
    expect(Object.keys(node).sort()).toEqual([...NODE_FIELDS, 'token'].sort());
    expect(node).toMatchObject({
      name: 'edge-001',
      hardware_serial_number: 'SN-001',
      node_state: 'NEW',
      last_seen_at: null,
      organization: { id: east, name: 'East' },
      metadata: { labels: { site: 'berlin', rack: '4' } },
      max_headless_time: 120,
      headless_expires_at: null,
      status: { node: { addresses: [], info: { version: { software_version: null } } } },
      certificate: null,
      upgrade: null,
      tunnels: { CONNECTED: 0, TERMINATED: 0 },
      services: { HEALTHY: 0, UNHEALTHY: 0, TERMINATED: 0 },
    });
    expect(node.state_since).toMatch(ISO);
    expect(node.created_at).toMatch(ISO);
    expect(node.token).toMatch(/^ewn_[A-Za-z0-9_-]{43}$/);

    const stored = (await nodeRows()).find((row) => row.id === node.id);
    expect(stored?.token_hash).toBe(sha256Hex(node.token as string));
    const read = await t.request('GET', `/api/v1/node/${node.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toStrictEqual(Object.fromEntries(Object.entries(node).filter(([k]) => k !== 'token')));
    const list = await t.request('GET', '/api/v2/node?size=100');
    expect(list.text).not.toContain(node.token);
    expect(t.logs.join('')).not.toContain(node.token);
  });

  it("defaults to the caller's organization and a day of headless time", async () => {
    const node = await register({ name: 'edge-defaults' }, eastOperator.key);
    expect(node.organization).toEqual({ id: east, name: 'East' });
    expect(node.max_headless_time).toBe(1_440);
    expect(node.metadata).toEqual({ labels: {} });
  });

  it('answers 409 for a serial number already registered, and writes nothing', async () => {
    await register({ name: 'edge-serial', hardware_serial_number: 'SN-DUP' });
    const before = await nodeRows();
    const res = await t.request('POST', '/api/v1/node', {
      body: { name: 'edge-serial-2', hardware_serial_number: 'SN-DUP' },
    });
    expectError(res, 409, 'CONFLICT');
    expect(await nodeRows()).toEqual(before);
  });

  it("answers 404 for an organization outside the caller's", async () => {
    const before = await nodeRows();
    for (const orgId of [west, rootOrg, '01900000-0000-7000-8000-000000000001']) {
      const res = await t.request('POST', '/api/v1/node', {
        key: eastOperator.key,
        body: { name: 'edge-elsewhere', create_under: orgId },
      });
      expectError(res, 404, 'NOT_FOUND');
    }
    expect(await nodeRows()).toEqual(before);
  });

  const bad: [string, unknown][] = [
    ['no name', {}],
    ['an empty name', { name: '' }],
    ['a name over 128 characters', { name: 'n'.repeat(129) }],
    ['a numeric name', { name: 7 }],
    ['a negative headless time', { name: 'x', max_headless_time: -1 }],
    ['a headless time over a year', { name: 'x', max_headless_time: 525_601 }],
    ['a fractional headless time', { name: 'x', max_headless_time: 1.5 }],
    ['a headless time as text', { name: 'x', max_headless_time: '60' }],
    ['an empty serial number', { name: 'x', hardware_serial_number: '' }],
    ['a label value that is not text', { name: 'x', metadata: { labels: { a: 1 } } }],
    ['metadata with an unknown field', { name: 'x', metadata: { colour: 'blue' } }],
    ['an unknown field', { name: 'x', token: 'mine' }],
    ['an empty create_under', { name: 'x', create_under: '' }],
  ];
  it.each(bad)('answers 400 for %s and writes nothing', async (_label, body) => {
    const before = await nodeRows();
    expectError(await t.request('POST', '/api/v1/node', { body }), 400, 'BAD_REQUEST');
    expect(await nodeRows()).toEqual(before);
  });
});

describe('GET /api/v2/node', () => {
  let ids: Record<string, string>;
  beforeAll(async () => {
    ids = {};
    for (const [name, org, serial, labels] of [
      ['zeta-east', east, 'LIST-Z', { tier: 'gold' }],
      ['alpha-east', east, 'LIST-A', { tier: 'silver' }],
      ['mid-lab', eastLab, 'LIST-M', { tier: 'gold' }],
      ['beta-west', west, 'LIST-B', {}],
    ] as const) {
      ids[name] = (
        await register({ name, create_under: org, hardware_serial_number: serial, metadata: { labels } })
      ).id as string;
    }
  });

  const names = (res: { body: { results: { name: string }[] } }) => res.body.results.map((node) => node.name);

  it('lists the organization and those below it by name, with total_count', async () => {
    const res = await t.request('GET', `/api/v2/node?org_id=${east}&size=100`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['total_count', 'results']);
    const listed = names(res);
    expect(listed).toEqual([...listed].sort());
    expect(listed).toEqual(expect.arrayContaining(['alpha-east', 'zeta-east', 'mid-lab']));
    expect(listed).not.toContain('beta-west');
    expect(res.body.total_count).toBe(listed.length);
  });

  it('keeps to the organization itself with include_child=false', async () => {
    const res = await t.request('GET', `/api/v2/node?org_id=${east}&include_child=false&size=100`);
    expect(names(res)).not.toContain('mid-lab');
    expect(names(res)).toEqual(expect.arrayContaining(['alpha-east', 'zeta-east']));
  });

  it("shows an operator only the nodes of the operator's organizations", async () => {
    const res = await t.request('GET', '/api/v2/node?size=100', { key: eastOperator.key });
    expect(names(res)).not.toContain('beta-west');
    expectError(
      await t.request('GET', `/api/v2/node?org_id=${west}`, { key: eastOperator.key }),
      404,
      'NOT_FOUND',
    );
  });

  it('searches name and serial number in any case, and filters by label and state', async () => {
    expect(names(await t.request('GET', '/api/v2/node?search=ALPHA'))).toEqual(['alpha-east']);
    expect(names(await t.request('GET', '/api/v2/node?search=list-m'))).toEqual(['mid-lab']);
    expect(names(await t.request('GET', '/api/v2/node?search=%25'))).toEqual([]);
    const gold = await t.request('GET', '/api/v2/node?label=tier:gold&size=100');
    expect(names(gold)).toEqual(['mid-lab', 'zeta-east']);
    const fresh = await t.request('GET', '/api/v2/node?node_state=NEW&size=100');
    expect(fresh.body.total_count).toBeGreaterThanOrEqual(4);
    expect((await t.request('GET', '/api/v2/node?node_state=ALIVE')).body).toEqual({
      total_count: 0,
      results: [],
    });
  });

  it('pages in a stable order', async () => {
    const whole = await t.request('GET', '/api/v2/node?size=100');
    const pages = [];
    for (let page = 0; page * 2 < whole.body.total_count; page += 1) {
      pages.push(...(await t.request('GET', `/api/v2/node?size=2&page=${page}`)).body.results);
    }
    expect(pages).toEqual(whole.body.results);
  });

  it.each(['node_state=DOWN', 'include_child=maybe', 'label=nocolon', 'search=', 'size=0', 'colour=blue'])(
    'answers 400 for ?%s',
    async (query) => {
      expectError(await t.request('GET', `/api/v2/node?${query}`), 400, 'BAD_REQUEST');
    },
  );
});

describe('one node', () => {
  it("answers 404 for another organization's node, on every route", async () => {
    const westNode = await register({ name: 'west-only', create_under: west });
    const before = await nodeRows();
    const calls: [string, string, RequestOptions][] = [
      ['GET', `/api/v1/node/${westNode.id}`, {}],
      ['PUT', `/api/v1/node/${westNode.id}`, { body: { name: 'mine now' } }],
      ['DELETE', `/api/v1/node/${westNode.id}`, {}],
      ['POST', `/api/v1/node/${westNode.id}/token`, {}],
    ];
    for (const [method, url, options] of calls) {
      const res = await t.request(method, url, { ...options, key: eastOperator.key });
      expectError(res, 404, 'NOT_FOUND');
    }
    expect(await nodeRows()).toEqual(before);
    expectError(
      await t.request('GET', '/api/v1/node/01900000-0000-7000-8000-000000000009'),
      404,
      'NOT_FOUND',
    );
  });

  it('edits name, labels and headless time, and keeps the rest', async () => {
    const node = await register({ name: 'to-edit', metadata: { labels: { a: '1' } } });
    const res = await t.request('PUT', `/api/v1/node/${node.id}`, {
      body: { name: 'edited', max_headless_time: 30, metadata: { labels: { b: '2' } } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      name: 'edited',
      max_headless_time: 30,
      metadata: { labels: { b: '2' } },
    });
    expect(res.body.created_at).toBe(node.created_at);
    const byLabel = await t.request('GET', '/api/v2/node?label=b:2');
    expect(byLabel.body.results.map((n: { id: string }) => n.id)).toEqual([node.id]);
    expect((await t.request('GET', '/api/v2/node?label=a:1')).body.total_count).toBe(0);
    expectError(await t.request('PUT', `/api/v1/node/${node.id}`, { body: {} }), 400, 'BAD_REQUEST');
    expectError(
      await t.request('PUT', `/api/v1/node/${node.id}`, { body: { hardware_serial_number: 'X' } }),
      400,
      'BAD_REQUEST',
    );
  });

  it('issues a new token: the old hash is gone and the new one is shown once', async () => {
    const node = await register({ name: 'rotate' });
    const res = await t.request('POST', `/api/v1/node/${node.id}/token`);
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^ewn_/);
    expect(res.body.token).not.toBe(node.token);
    const stored = (await nodeRows()).find((row) => row.id === node.id);
    expect(stored?.token_hash).toBe(sha256Hex(res.body.token as string));
  });

  it('deletes a node: {id, message, status}, then 404', async () => {
    const node = await register({ name: 'to-delete' });
    const res = await t.request('DELETE', `/api/v1/node/${node.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: node.id, message: 'Node deleted.', status: 'SUCCESS' });
    expectError(await t.request('GET', `/api/v1/node/${node.id}`), 404, 'NOT_FOUND');
    expectError(await t.request('DELETE', `/api/v1/node/${node.id}`), 404, 'NOT_FOUND');
  });
});

describe('permissions', () => {
  it('lets Read Only read the fleet and nothing more', async () => {
    const node = await register({ name: 'read-me' });
    expect((await t.request('GET', '/api/v2/node', { key: reader.key })).status).toBe(200);
    expect((await t.request('GET', `/api/v1/node/${node.id}`, { key: reader.key })).status).toBe(200);
    const writes: [string, string, RequestOptions][] = [
      ['POST', '/api/v1/node', { body: { name: 'nope' } }],
      ['PUT', `/api/v1/node/${node.id}`, { body: { name: 'nope' } }],
      ['DELETE', `/api/v1/node/${node.id}`, {}],
      ['POST', `/api/v1/node/${node.id}/token`, {}],
    ];
    for (const [method, url, options] of writes) {
      expectError(await t.request(method, url, { ...options, key: reader.key }), 403, 'FORBIDDEN');
    }
  });

  it('refuses a node token where a user key belongs', async () => {
    const node = await register({ name: 'token-as-key' });
    expectError(await t.request('GET', '/api/v2/node', { key: node.token as string }), 401, 'UNAUTHORIZED');
    expectError(await t.request('GET', '/api/v2/node', { key: null }), 401, 'UNAUTHORIZED');
  });
});
