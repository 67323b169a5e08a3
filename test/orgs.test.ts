import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.js';
import { expectError } from './support/error-shape.js';

interface Org {
  id: string;
  name: string;
  parent_id: string | null;
  created_at: string;
}

let t: TestApp;
let root: Org;
let east: Org;
let west: Org;
let eastLab: Org;

async function createOrg(body: unknown, key?: string): Promise<Org> {
  const res = await t.request('POST', '/api/v1/org', { body, ...(key === undefined ? {} : { key }) });
  expect(res.status, res.text).toBe(201);
  return res.body as Org;
}

async function countOrgs(): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('organizations')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const ids = (res: { body: { results: Org[] } }) => res.body.results.map((org) => org.id);

/** An organization as created, without the counts that reading it adds. */
const bare = ({ node_count: _nodes, user_count: _users, ...org }: Org & Record<string, unknown>) => org;

beforeAll(async () => {
  t = await startTestApp();
  const me = await t.request('GET', '/api/v1/user/me');
  root = bare((await t.request('GET', `/api/v1/org/${me.body.org_id}`)).body);
  east = await createOrg({ name: 'East' });
  west = await createOrg({ name: 'West' });
  eastLab = await createOrg({ name: 'East lab', parent_id: east.id });
});
afterAll(async () => {
  await t.close();
});

describe('POST /api/v1/org', () => {
  it("creates an organization below the caller's by default", async () => {
    const res = await t.request('POST', '/api/v1/org', { body: { name: 'North' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'id', 'name', 'parent_id']);
    expect(res.body).toMatchObject({ name: 'North', parent_id: root.id });
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    const read = await t.request('GET', `/api/v1/org/${res.body.id}`);
    expect(read.body).toEqual({ ...res.body, node_count: 0, user_count: 0 });
  });

  it('creates below a given organization of the subtree', () => {
    expect(eastLab.parent_id).toBe(east.id);
  });

  it("lets an Admin of a child organization create only inside that child's subtree", async () => {
    const eastAdmin = await t.userWithRoles(['admin'], east.id);
    const own = await createOrg({ name: 'East depot' }, eastAdmin.key);
    expect(own.parent_id).toBe(east.id);
    const deeper = await createOrg({ name: 'East lab annex', parent_id: eastLab.id }, eastAdmin.key);
    expect(deeper.parent_id).toBe(eastLab.id);

    const before = await countOrgs();
    for (const parent of [root.id, west.id, 'no-such-org']) {
      const res = await t.request('POST', '/api/v1/org', {
        key: eastAdmin.key,
        body: { name: 'Escape', parent_id: parent },
      });
      expectError(res, 404, 'NOT_FOUND');
    }
    expect(await countOrgs()).toBe(before);
  });

  it('refuses Operator and Read Only with 403 and writes nothing', async () => {
    const operator = await t.userWithRoles(['operator']);
    const reader = await t.userWithRoles(['read_only']);
    const before = await countOrgs();
    for (const key of [operator.key, reader.key]) {
      expectError(await t.request('POST', '/api/v1/org', { key, body: { name: 'Nope' } }), 403, 'FORBIDDEN');
    }
    expect(await countOrgs()).toBe(before);
  });

  const badInputs: { label: string; payload?: string; contentType?: string; status: number }[] = [
    { label: 'no body', status: 400 },
    { label: 'an empty body', payload: '', status: 400 },
    { label: 'an empty object', payload: '{}', status: 400 },
    { label: 'name is a number', payload: '{"name":5}', status: 400 },
    { label: 'name is null', payload: '{"name":null}', status: 400 },
    { label: 'name is empty', payload: '{"name":""}', status: 400 },
    { label: 'name is too long', payload: JSON.stringify({ name: 'n'.repeat(129) }), status: 400 },
    { label: 'parent_id is a number', payload: '{"name":"x","parent_id":1}', status: 400 },
    { label: 'parent_id is empty', payload: '{"name":"x","parent_id":""}', status: 400 },
    {
      label: 'parent_id is too long',
      payload: JSON.stringify({ name: 'x', parent_id: 'p'.repeat(65) }),
      status: 400,
    },
    { label: 'an extra field', payload: '{"name":"x","owner":"me"}', status: 400 },
    { label: 'an array body', payload: '[{"name":"x"}]', status: 400 },
    { label: 'a null body', payload: 'null', status: 400 },
    { label: 'malformed JSON', payload: '{"name":"x"', status: 400 },
    { label: 'a constructor key', payload: '{"name":"x","constructor":{"prototype":{}}}', status: 400 },
    { label: 'a body over 64 KiB', payload: JSON.stringify({ name: 'n'.repeat(70 * 1024) }), status: 413 },
    { label: 'text/plain', payload: '{"name":"x"}', contentType: 'text/plain', status: 415 },
    { label: 'XML', payload: '<org name="x"/>', contentType: 'application/xml', status: 415 },
  ];
  const REASONS: Record<number, string> = {
    400: 'BAD_REQUEST',
    413: 'PAYLOAD_TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE',
  };

  it.each(badInputs)('refuses $label with $status and writes nothing', async (input) => {
    const before = await countOrgs();
    const res = await t.request('POST', '/api/v1/org', {
      ...(input.payload === undefined ? {} : { payload: input.payload }),
      headers: { 'content-type': input.contentType ?? 'application/json' },
    });
    expectError(res, input.status, REASONS[input.status] ?? '');
    expect(await countOrgs()).toBe(before);
  });
});

describe('GET /api/v2/org', () => {
  it('shows the root admin the whole tree, root first', async () => {
    const res = await t.request('GET', '/api/v2/org');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['total_count', 'results']);
    expect(res.body.total_count).toBe(res.body.results.length);
    expect(bare(res.body.results[0])).toEqual(root);
    expect(root.parent_id).toBeNull();
    expect(ids(res)).toEqual(expect.arrayContaining([root.id, east.id, west.id, eastLab.id]));
  });

  it('shows a user of a child organization only that subtree', async () => {
    const operator = await t.userWithRoles(['operator'], east.id);
    const res = await t.request('GET', '/api/v2/org', { key: operator.key });
    expect(res.status).toBe(200);
    expect(ids(res)[0]).toBe(east.id);
    expect(ids(res)).toContain(eastLab.id);
    expect(ids(res)).not.toContain(root.id);
    expect(ids(res)).not.toContain(west.id);
    for (const org of res.body.results as Org[]) {
      const read = await t.request('GET', `/api/v1/org/${org.id}`);
      expect(read.body.id).toBe(org.id);
    }
  });

  it('shows a user of a leaf organization only that organization', async () => {
    const reader = await t.userWithRoles(['read_only'], west.id);
    const res = await t.request('GET', '/api/v2/org', { key: reader.key });
    expect(res.body.results.map(bare)).toEqual([west]);
  });
});

describe("GET /api/v2/org with the published client's org_id and own", () => {
  it("counts each organization's own nodes and users, not those below it", async () => {
    const counted = await t.request('POST', '/api/v1/org', { body: { name: 'Counted' } });
    const below = await t.request('POST', '/api/v1/org', {
      body: { name: 'Below', parent_id: counted.body.id },
    });
    for (const name of ['gw-1', 'gw-2']) {
      const node = await t.request('POST', '/api/v1/node', { body: { name, create_under: counted.body.id } });
      expect(node.status, node.text).toBe(201);
    }
    await t.request('POST', '/api/v1/node', { body: { name: 'gw-below', create_under: below.body.id } });
    await t.userWithRoles(['read_only'], counted.body.id);
    const res = await t.request('GET', `/api/v2/org?org_id=${counted.body.id}&own=true`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.total_count).toBe(2);
    expect(res.body.results).toEqual([
      { ...counted.body, node_count: 2, user_count: 1 },
      { ...below.body, node_count: 1, user_count: 0 },
    ]);
    const one = await t.request('GET', `/api/v1/org/${counted.body.id}`);
    expect(one.body).toMatchObject({ node_count: 2, user_count: 1 });
  });

  it('lists from org_id down, and answers 404 for an organization the caller cannot see', async () => {
    const res = await t.request('GET', `/api/v2/org?org_id=${east.id}&own=false`);
    expect(ids(res)[0]).toBe(east.id);
    expect(ids(res)).toContain(eastLab.id);
    expect(ids(res)).not.toContain(root.id);
    expect(ids(res)).not.toContain(west.id);
    const reader = await t.userWithRoles(['read_only'], east.id);
    for (const hidden of [root.id, west.id, 'no-such-org']) {
      const refused = await t.request('GET', `/api/v2/org?org_id=${hidden}`, { key: reader.key });
      expectError(refused, 404, 'NOT_FOUND');
    }
  });
});

describe('GET /api/v1/org/{id}', () => {
  it('answers an organization of the subtree', async () => {
    const res = await t.request('GET', `/api/v1/org/${eastLab.id}`);
    expect(res.status).toBe(200);
    expect(bare(res.body)).toEqual(eastLab);
  });

  it('answers 404 for a parent, a sibling or an unknown id, as if they did not exist', async () => {
    const reader = await t.userWithRoles(['read_only'], east.id);
    const unknown = await t.request('GET', '/api/v1/org/no-such-org', { key: reader.key });
    expectError(unknown, 404, 'NOT_FOUND');
    for (const hidden of [root.id, west.id]) {
      const res = await t.request('GET', `/api/v1/org/${hidden}`, { key: reader.key });
      expectError(res, 404, 'NOT_FOUND');
      expect(res.body.message).toBe(unknown.body.message);
    }
    expect((await t.request('GET', `/api/v1/org/${eastLab.id}`, { key: reader.key })).status).toBe(200);
  });
});
