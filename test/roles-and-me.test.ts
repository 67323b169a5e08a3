import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.js';
import { expectError } from './support/error-shape.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

interface Role {
  id: string;
  name: string;
  permissions: string[];
}

async function roles(key?: string): Promise<Role[]> {
  const res = await t.request('GET', '/api/v2/role', key === undefined ? {} : { key });
  expect(res.status, res.text).toBe(200);
  expect(res.body.total_count).toBe(3);
  expect(Object.keys(res.body)).toEqual(['total_count', 'results']);
  return res.body.results as Role[];
}

describe('GET /api/v2/role', () => {
  it('lists Admin, Operator and Read Only with stable ids', async () => {
    const list = await roles();
    expect(list.map(({ id, name }) => ({ id, name }))).toEqual([
      { id: 'admin', name: 'Admin' },
      { id: 'operator', name: 'Operator' },
      { id: 'read_only', name: 'Read Only' },
    ]);
    for (const role of list) {
      expect(Object.keys(role).sort()).toEqual(['id', 'name', 'permissions']);
      expect(role.permissions.length).toBeGreaterThan(0);
      expect(new Set(role.permissions).size).toBe(role.permissions.length);
    }
    expect(await roles()).toEqual(list);
  });

  it('grants Admin everything, Operator less, Read Only reads and its own keys and profile', async () => {
    const [admin, operator, reader] = await roles();
    expect(operator!.permissions.every((p) => admin!.permissions.includes(p))).toBe(true);
    expect(reader!.permissions.every((p) => operator!.permissions.includes(p))).toBe(true);
    for (const adminOnly of ['users:create', 'orgs:create']) {
      expect(admin!.permissions).toContain(adminOnly);
      expect(operator!.permissions).not.toContain(adminOnly);
    }
    expect(operator!.permissions).toEqual(expect.arrayContaining(['alerts:write', 'webhooks:write']));
    const readerWrites = reader!.permissions.filter((p) => !p.endsWith(':read'));
    expect(readerWrites.sort()).toEqual(['apikeys:own', 'profile:own']);
  });

  it('is readable by every role', async () => {
    const expected = await roles();
    for (const role of ['operator', 'read_only']) {
      const user = await t.userWithRoles([role]);
      expect(await roles(user.key)).toEqual(expected);
    }
  });

  it('has ids that are the ones a new user is given', async () => {
    const ids = (await roles()).map((role) => role.id);
    const res = await t.request('POST', '/api/v1/user', {
      body: { name: 'Every role', email: 'every-role@example.com', password: 'long-enough', roles: ids },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.roles.map((role: { id: string }) => role.id).sort()).toEqual([...ids].sort());
  });
});

describe('GET /api/v1/user/me', () => {
  const ME_KEYS = ['email', 'id', 'name', 'org', 'org_id', 'organization', 'roles', 'username'];

  it('describes the bootstrap admin', async () => {
    const res = await t.request('GET', '/api/v1/user/me');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(ME_KEYS);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Administrator',
      email: 'admin@edgewatch.local',
      username: 'admin@edgewatch.local',
      org_id: expect.any(String),
      org: { id: res.body.org_id, name: 'Root organization' },
      organization: { id: res.body.org_id, name: 'Root organization' },
      roles: [{ id: 'admin', name: 'Admin' }],
    });
    const orgs = await t.request('GET', '/api/v2/org');
    expect(orgs.body.results[0]).toMatchObject({ id: res.body.org_id, parent_id: null });
  });

  it('describes a user made through the API, in a child organization with two roles', async () => {
    const org = await t.request('POST', '/api/v1/org', { body: { name: 'Branch office' } });
    const user = await t.userWithRoles(['read_only', 'operator'], org.body.id);
    const res = await t.request('GET', '/api/v1/user/me', { key: user.key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(ME_KEYS);
    expect(res.body).toMatchObject({
      id: user.id,
      email: user.email,
      username: user.email,
      org_id: org.body.id,
      org: { id: org.body.id, name: 'Branch office' },
      organization: { id: org.body.id, name: 'Branch office' },
    });
    expect(typeof res.body.name).toBe('string');
    expect([...res.body.roles].sort((a: Role, b: Role) => a.id.localeCompare(b.id))).toEqual([
      { id: 'operator', name: 'Operator' },
      { id: 'read_only', name: 'Read Only' },
    ]);
    expect(res.text).not.toContain(user.password);
    expect(res.text).not.toMatch(/password|hash|\$argon2/i);
  });

  it('answers the caller of each key, not the admin', async () => {
    const user = await t.userWithRoles(['read_only']);
    const mine = await t.request('GET', '/api/v1/user/me', { key: user.key });
    const admin = await t.request('GET', '/api/v1/user/me');
    expect(mine.body.id).toBe(user.id);
    expect(mine.body.id).not.toBe(admin.body.id);
  });

  it('needs a key', async () => {
    expectError(await t.request('GET', '/api/v1/user/me', { key: null }), 401, 'UNAUTHORIZED');
  });
});
