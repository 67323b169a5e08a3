import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { Actor, ServiceContext } from '../src/context.js';
import { authenticate } from '../src/features/apikeys/service.js';
import { editUser, removeUser } from '../src/features/users/directory.js';
import { AppError } from '../src/http/errors.js';
import type { App } from '../src/http/types.js';
import { closeContext, openContext } from '../src/runtime.js';
import { createAlert, nodeAlert } from './support/alerts.js';
import { expectError } from './support/error-shape.js';
import { ADMIN_KEY, dialect, startTestApp, type TestApp } from './support/harness.js';
import { lockWaiters } from './support/locks.js';

/** The user directory (docs/rules/users.md): listing, reading, editing and removing users, on both databases. */

let t: TestApp;
let rootOrg: string;
let childOrg: string;

beforeAll(async () => {
  t = await startTestApp();
  rootOrg = (await t.request('GET', '/api/v1/user/me')).body.org_id;
  childOrg = (await t.request('POST', '/api/v1/org', { body: { name: 'Depot' } })).body.id;
});
afterAll(async () => {
  await t.close();
});

async function actorOf(app: TestApp, key: string): Promise<ServiceContext> {
  const actor = (await authenticate(app.ctx, key)) as Actor;
  return { ...app.ctx, actor };
}

async function adminCount(app: TestApp): Promise<number> {
  const rows = await app.ctx.db
    .selectFrom('user_roles')
    .select('user_id')
    .where('role_id', '=', 'admin')
    .execute();
  return rows.length;
}

describe('GET /api/v2/user', () => {
  it('shows an Admin the users of their organization and below, and anyone else only themselves', async () => {
    const operator = await t.userWithRoles(['operator']);
    const depotReader = await t.userWithRoles(['read_only'], childOrg);
    const all = await t.request('GET', '/api/v2/user?size=100');
    expect(all.status, all.text).toBe(200);
    const ids = all.body.results.map((user: { id: string }) => user.id);
    expect(ids).toEqual(expect.arrayContaining([operator.id, depotReader.id]));
    expect(all.body.total_count).toBe(ids.length);
    const depot = all.body.results.find((user: { id: string }) => user.id === depotReader.id);
    expect(depot).toMatchObject({
      email: depotReader.email,
      username: depotReader.email,
      org_id: childOrg,
      organization: { id: childOrg, name: 'Depot' },
      roles: [{ id: 'read_only', name: 'Read Only' }],
      email_verified: true,
    });
    for (const key of [operator.key, depotReader.key]) {
      const own = await t.request('GET', '/api/v2/user?own=true', { key });
      expect(own.status).toBe(200);
      expect(own.body.total_count).toBe(1);
      expect(own.body.results[0].id).toBe(key === operator.key ? operator.id : depotReader.id);
    }
  });

  it('narrows by org_id, search and role, pages past the end, and refuses an unseen organization', async () => {
    const depotOperator = await t.userWithRoles(['operator'], childOrg);
    const inDepot = await t.request('GET', `/api/v2/user?org_id=${childOrg}&own=true`);
    expect(inDepot.body.results.every((user: { org_id: string }) => user.org_id === childOrg)).toBe(true);
    expect(inDepot.body.results.map((user: { id: string }) => user.id)).toContain(depotOperator.id);
    const local = depotOperator.email.split('@')[0]!.toUpperCase();
    const found = await t.request('GET', `/api/v2/user?search=${encodeURIComponent(local)}`);
    expect(found.body.results.map((user: { id: string }) => user.id)).toEqual([depotOperator.id]);
    const wildcard = await t.request('GET', '/api/v2/user?search=%25');
    expect(wildcard.body.total_count).toBe(0);
    const admins = await t.request('GET', '/api/v2/user?role=admin');
    expect(
      admins.body.results.every((user: { roles: { id: string }[] }) =>
        user.roles.some((r) => r.id === 'admin'),
      ),
    ).toBe(true);
    expectError(await t.request('GET', '/api/v2/user?role=superuser'), 400, 'BAD_REQUEST');
    const past = await t.request('GET', `/api/v2/user?org_id=${childOrg}&page=50&size=100`);
    expect(past.body).toEqual({ total_count: inDepot.body.total_count, results: [] });
    expectError(
      await t.request('GET', `/api/v2/user?org_id=${rootOrg}`, { key: depotOperator.key }),
      404,
      'NOT_FOUND',
    );
    const unknown = await t.request('GET', '/api/v2/user?limit=5');
    expectError(unknown, 400, 'BAD_REQUEST');
    expect(unknown.body.message).toContain('limit');
  });
});

describe('GET /api/v1/user/{id}', () => {
  it('answers yourself, or as an Admin a user below you with what they own; anyone else is 404', async () => {
    const operator = await t.userWithRoles(['operator']);
    await createAlert(t, nodeAlert(rootOrg), operator.key);
    const read = await t.request('GET', `/api/v1/user/${operator.id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.owns).toEqual({ alerts: 1, webhooks: 0, channels: 0 });
    expect((await t.request('GET', `/api/v1/user/${operator.id}`, { key: operator.key })).status).toBe(200);
    const other = await t.userWithRoles(['read_only']);
    expectError(await t.request('GET', `/api/v1/user/${other.id}`, { key: operator.key }), 404, 'NOT_FOUND');
    const depotAdmin = await t.userWithRoles(['admin'], childOrg);
    expectError(
      await t.request('GET', `/api/v1/user/${operator.id}`, { key: depotAdmin.key }),
      404,
      'NOT_FOUND',
    );
    expectError(await t.request('GET', '/api/v1/user/no-such-user'), 404, 'NOT_FOUND');
  });
});

describe('PUT /api/v1/user/{id}', () => {
  it("takes the published client's body: empty fields are unchanged, and nothing to change is a 400", async () => {
    const user = await t.userWithRoles(['operator']);
    const nothing = await t.request('PUT', `/api/v1/user/${user.id}`, {
      body: { name: '', roles: [], password: '', email: '' },
    });
    expectError(nothing, 400, 'BAD_REQUEST');
    const renamed = await t.request('PUT', `/api/v1/user/${user.id}`, {
      body: { name: 'Renamed', roles: [], password: '', email: '' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({
      id: user.id,
      name: 'Renamed',
      roles: [{ id: 'operator', name: 'Operator' }],
    });
    const blank = await t.request('PUT', `/api/v1/user/${user.id}`, { body: { name: '   ' } });
    expectError(blank, 400, 'BAD_REQUEST');
    expect(blank.body.details[0].field).toBe('name');
    const same = await t.request('PUT', `/api/v1/user/${user.id}`, {
      body: { name: null, roles: null, email: user.email },
    });
    expectError(same, 400, 'BAD_REQUEST');
  });

  it('refuses a password, another e-mail address or an unknown role, changing nothing', async () => {
    const user = await t.userWithRoles(['operator']);
    for (const [body, field] of [
      [{ name: 'X', password: 'new-password-1' }, 'password'],
      [{ name: 'X', email: 'someone-else@example.com' }, 'email'],
      [{ roles: ['admin', 'superuser'] }, 'roles'],
    ] as const) {
      const res = await t.request('PUT', `/api/v1/user/${user.id}`, { body });
      expectError(res, 400, 'BAD_REQUEST');
      expect(res.body.details?.[0]?.field).toBe(field);
    }
    const read = await t.request('GET', `/api/v1/user/${user.id}`);
    expect(read.body.roles).toEqual([{ id: 'operator', name: 'Operator' }]);
    expect(read.body.name).not.toBe('X');
  });

  it('lets anyone rename themselves, but only an Admin change roles or touch another user', async () => {
    const reader = await t.userWithRoles(['read_only']);
    const own = await t.request('PUT', `/api/v1/user/${reader.id}`, {
      key: reader.key,
      body: { name: 'My own name' },
    });
    expect(own.status, own.text).toBe(200);
    expect((await t.request('GET', '/api/v1/user/me', { key: reader.key })).body.name).toBe('My own name');
    const roles = await t.request('PUT', `/api/v1/user/${reader.id}`, {
      key: reader.key,
      body: { roles: ['admin'] },
    });
    expectError(roles, 403, 'FORBIDDEN');
    const other = await t.userWithRoles(['operator']);
    expectError(
      await t.request('PUT', `/api/v1/user/${other.id}`, { key: reader.key, body: { name: 'Hijack' } }),
      404,
      'NOT_FOUND',
    );
  });

  it("applies a change of roles to the user's keys at once", async () => {
    const user = await t.userWithRoles(['operator']);
    await createAlert(t, nodeAlert(rootOrg), user.key);
    const demoted = await t.request('PUT', `/api/v1/user/${user.id}`, { body: { roles: ['read_only'] } });
    expect(demoted.body.roles).toEqual([{ id: 'read_only', name: 'Read Only' }]);
    const refused = await t.request('POST', '/api/v1/mysubscriptions/', {
      key: user.key,
      body: nodeAlert(rootOrg),
    });
    expectError(refused, 403, 'FORBIDDEN');
    await t.request('PUT', `/api/v1/user/${user.id}`, { body: { roles: ['operator', 'read_only'] } });
    const allowed = await t.request('POST', '/api/v1/mysubscriptions/', {
      key: user.key,
      body: nodeAlert(rootOrg),
    });
    expect(allowed.status, allowed.text).toBe(201);
  });
});

describe('DELETE /api/v1/user/{id}', () => {
  it('refuses yourself, a user you cannot see and a non-Admin caller', async () => {
    const me = (await t.request('GET', '/api/v1/user/me')).body.id;
    expectError(await t.request('DELETE', `/api/v1/user/${me}`), 409, 'CONFLICT');
    const operator = await t.userWithRoles(['operator']);
    const other = await t.userWithRoles(['read_only']);
    expectError(
      await t.request('DELETE', `/api/v1/user/${other.id}`, { key: operator.key }),
      403,
      'FORBIDDEN',
    );
    const depotAdmin = await t.userWithRoles(['admin'], childOrg);
    expectError(
      await t.request('DELETE', `/api/v1/user/${other.id}`, { key: depotAdmin.key }),
      404,
      'NOT_FOUND',
    );
    expect((await t.request('GET', `/api/v1/user/${other.id}`)).status).toBe(200);
  });

  it('names what the user owns (409), and with force removes it all; their keys stop working at once', async () => {
    const user = await t.userWithRoles(['operator']);
    expect((await t.request('GET', '/api/v2/apikey', { key: user.key })).status).toBe(200);
    await createAlert(t, nodeAlert(rootOrg), user.key);
    await createAlert(t, nodeAlert(rootOrg, { name: 'Second' }), user.key);
    const webhook = await t.request('POST', '/api/v1/webhook', {
      key: user.key,
      body: { name: 'Hook', url: 'https://hooks.example.com/edge' },
    });
    expect(webhook.status, webhook.text).toBe(201);
    const channel = await t.request('POST', '/api/v1/channel', {
      key: user.key,
      body: { name: 'Ops', type: 'slack', url: 'https://hooks.slack.com/services/T000/B000/abcdefghijkl' },
    });
    expect(channel.status, channel.text).toBe(201);
    const refused = await t.request('DELETE', `/api/v1/user/${user.id}`);
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.message).toContain('2 alerts, 1 webhook and 1 channel');
    expect((await t.request('GET', '/api/v2/apikey', { key: user.key })).status).toBe(200);
    const removed = await t.request('DELETE', `/api/v1/user/${user.id}?force=true`);
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toEqual({
      id: user.id,
      status: 'SUCCESS',
      message: 'The user has been removed.',
      removed: { alerts: 2, webhooks: 1, channels: 1 },
    });
    expectError(await t.request('GET', '/api/v2/apikey', { key: user.key }), 401, 'UNAUTHORIZED');
    expectError(await t.request('GET', `/api/v1/user/${user.id}`), 404, 'NOT_FOUND');
    const left = await t.ctx.db.selectFrom('webhooks').select('id').where('user_id', '=', user.id).execute();
    expect(left).toEqual([]);
  });

  it('removes a user who owns nothing without force', async () => {
    const user = await t.userWithRoles(['read_only']);
    const res = await t.request('DELETE', `/api/v1/user/${user.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.removed).toEqual({ alerts: 0, webhooks: 0, channels: 0 });
    expectError(await t.request('GET', '/api/v1/user/me', { key: user.key }), 401, 'UNAUTHORIZED');
  });
});

/**
 * Each change waits, once it has read the Admins, until the other has read them too or is held at their
 * lock: without that lock both would read two Admins and both take the role from one.
 */
function meetAfterReadingAdmins(app: TestApp) {
  let arrived = 0;
  let bothRead!: () => void;
  const both = new Promise<void>((resolve) => (bothRead = resolve));
  return {
    afterReadingAdmins: async () => {
      arrived += 1;
      if (arrived === 2) bothRead();
      await Promise.race([both, lockWaiters(app, 1)]);
    },
  };
}

/** The status a service call would answer with. */
const outcome = (work: Promise<unknown>) =>
  work.then(
    () => 200,
    (error: unknown) => {
      if (error instanceof AppError) return error.statusCode;
      throw error;
    },
  );

describe('the last Admin', () => {
  let fresh: TestApp;
  let removable: { second: { id: string; key: string }; bootstrapAdmin: string } | undefined;
  beforeAll(async () => {
    fresh = await startTestApp({ background: false });
  });
  afterAll(async () => {
    await fresh.close();
  });

  it('keeps the root organization an Admin, however many Admins the organizations below it have', async () => {
    const branch = await fresh.request('POST', '/api/v1/org', { body: { name: 'Branch' } });
    const branchAdmin = await fresh.userWithRoles(['admin'], branch.body.id);
    const me = (await fresh.request('GET', '/api/v1/user/me')).body.id;
    const res = await fresh.request('PUT', `/api/v1/user/${me}`, { body: { roles: ['operator'] } });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.message).toContain('last Admin of the root organization');
    // The branch's own last Admin may go: the root organization's Admin still sees and manages everyone.
    expect((await fresh.request('DELETE', `/api/v1/user/${branchAdmin.id}`)).status).toBe(200);
  });

  it('keeps the Admin role', async () => {
    const me = (await fresh.request('GET', '/api/v1/user/me')).body.id;
    const res = await fresh.request('PUT', `/api/v1/user/${me}`, { body: { roles: ['operator'] } });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.message).toContain('last Admin');
    expect(await adminCount(fresh)).toBe(1);
  });

  it('survives two Admins demoting each other at once: one change wins, the other is refused', async () => {
    const second = await fresh.userWithRoles(['admin']);
    const bootstrapAdmin = (await fresh.request('GET', '/api/v1/user/me')).body.id;
    expect(await adminCount(fresh)).toBe(2);
    const [first, other] = [await actorOf(fresh, ADMIN_KEY), await actorOf(fresh, second.key)];
    const seams = meetAfterReadingAdmins(fresh);
    const statuses = await Promise.all([
      outcome(editUser(first, second.id, { roles: ['operator'] }, seams)),
      outcome(editUser(other, bootstrapAdmin, { roles: ['operator'] }, seams)),
    ]);
    expect(statuses.sort()).toEqual([200, 409]);
    expect(await adminCount(fresh)).toBe(1);
    // Give the Admin role back to whoever lost it, for the next test.
    const [kept] = await fresh.ctx.db
      .selectFrom('user_roles')
      .select('user_id')
      .where('role_id', '=', 'admin')
      .execute();
    const demoted = kept!.user_id === second.id ? bootstrapAdmin : second.id;
    await editUser(kept!.user_id === second.id ? other : first, demoted, { roles: ['admin'] });
    expect(await adminCount(fresh)).toBe(2);
    removable = { second, bootstrapAdmin };
  });

  it('survives two Admins removing each other at once: one removal wins, the other is refused', async () => {
    const { second, bootstrapAdmin } = removable!;
    expect(await adminCount(fresh)).toBe(2);
    const seams = meetAfterReadingAdmins(fresh);
    const [first, other] = [await actorOf(fresh, ADMIN_KEY), await actorOf(fresh, second.key)];
    const statuses = await Promise.all([
      outcome(removeUser(first, second.id, false, seams)),
      outcome(removeUser(other, bootstrapAdmin, false, seams)),
    ]);
    expect(statuses.sort()).toEqual([200, 409]);
    expect(await adminCount(fresh)).toBe(1);
  });
});

describe('in every instance', () => {
  it("a removed user's key stops working at once in another instance sharing the database", async () => {
    const user = await t.userWithRoles(['operator']);
    const other = await secondInstance();
    try {
      const ask = async () =>
        (await other.app.inject({ method: 'GET', url: '/api/v2/apikey', headers: { 'x-api-key': user.key } }))
          .statusCode;
      expect(await ask()).toBe(200);
      expect((await t.request('DELETE', `/api/v1/user/${user.id}`)).status).toBe(200);
      // The other instance cached the key; the revocation reaches it with the commit, long before its
      // 10-second lifetime in the cache would end.
      const deadline = Date.now() + 2_000;
      let status = await ask();
      while (status !== 401 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        status = await ask();
      }
      expect(status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

/**
 * A second API instance on the same database: on PostgreSQL another pool and listener, as a second process
 * has; the embedded SQLite database is served by one process, so there it is the same instance.
 */
async function secondInstance(): Promise<{ app: App; close(): Promise<void> }> {
  if (dialect !== 'postgres') return { app: t.app, close: async () => undefined };
  const ctx = await openContext(t.config, t.ctx.logger, { schema: t.database.schema! });
  const app = await buildApp(ctx);
  await app.ready();
  return {
    app,
    close: async () => {
      await app.close();
      await closeContext(ctx);
    },
  };
}
