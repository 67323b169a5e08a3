import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import type { App } from '../src/http/types.js';
import type { AppContext } from '../src/context.js';
import { closeContext, openContext } from '../src/runtime.js';
import { subscriptionsVersion, touchSubscriptions } from '../src/features/users/repo.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/harness.js';

// Two service processes over one database: lists cached by one must reflect changes made by the other.
let t: TestApp;
let other: { app: App; ctx: AppContext };
let orgId = '';

beforeAll(async () => {
  t = await startTestApp();
  const ctx = await openContext(t.config, pino({ level: 'silent' }), {
    ...(t.database.schema === undefined ? {} : { schema: t.database.schema }),
  });
  other = { ctx, app: await buildApp(ctx) };
  orgId = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
});
afterAll(async () => {
  await other.app.close();
  await closeContext(other.ctx);
  await t.close();
});

async function viaOther(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) {
  const res = await other.app.inject({
    method,
    url,
    headers: {
      'x-api-key': ADMIN_KEY,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { status: res.statusCode, body: res.json() };
}

const alert = (name: string) => ({
  name,
  type: 'NODE_STATE_CHANGE',
  settings: { org_id: orgId, alert_me: 'UNREACHABLE' },
});

describe('cached lists across processes', () => {
  it('shows alerts created, edited and deleted by another process', async () => {
    expect((await t.request('GET', '/api/v2/mysubscriptions')).body.results).toEqual([]);
    const created = await viaOther('POST', '/api/v1/mysubscriptions', alert('From the other process'));
    expect(created.status).toBe(201);
    expect((await t.request('GET', '/api/v2/mysubscriptions')).body.results.map((a: any) => a.name)).toEqual([
      'From the other process',
    ]);
    await viaOther('PUT', `/api/v1/mysubscriptions/${created.body.id}`, { name: 'Renamed elsewhere' });
    expect((await t.request('GET', '/api/v2/mysubscriptions')).body.results[0].name).toBe(
      'Renamed elsewhere',
    );
    await viaOther('DELETE', `/api/v1/mysubscriptions/${created.body.id}`);
    expect((await t.request('GET', '/api/v2/mysubscriptions')).body.results).toEqual([]);
  });

  it('shows webhooks created, edited and deleted by another process', async () => {
    expect((await t.request('GET', '/api/v2/webhook')).body).toEqual([]);
    const created = await viaOther('POST', '/api/v1/webhook', {
      name: 'Elsewhere',
      url: 'https://hooks.example.com/x',
    });
    expect((await t.request('GET', '/api/v2/webhook')).body.map((w: any) => w.name)).toEqual(['Elsewhere']);
    await viaOther('PUT', `/api/v1/webhook/${created.body.id}`, { name: 'Renamed' });
    expect((await t.request('GET', '/api/v2/webhook')).body[0]).toMatchObject({
      name: 'Renamed',
      disabled_reason: 'edited',
    });
    await viaOther('DELETE', `/api/v1/user/webhook/${created.body.id}`);
    expect((await t.request('GET', '/api/v2/webhook')).body).toEqual([]);
  });

  it("keeps one user's cached list apart from another's", async () => {
    const operator = await t.userWithRoles(['operator']);
    await t.request('POST', '/api/v1/mysubscriptions', { body: alert('Admin alert') });
    expect((await t.request('GET', '/api/v2/mysubscriptions', { key: operator.key })).body.results).toEqual(
      [],
    );
    expect((await t.request('GET', '/api/v2/mysubscriptions')).body.results).toHaveLength(1);
  });

  it('never reads a version from a change that is not committed', async () => {
    const me = (await t.request('GET', '/api/v1/user/me')).body.id as string;
    const before = await subscriptionsVersion(t.ctx.db, me);
    let readDuringChange: Promise<number> | undefined;
    await t.ctx.db
      .transaction()
      .execute(async (trx) => {
        await touchSubscriptions(trx, me);
        readDuringChange = subscriptionsVersion(t.ctx.db, me);
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await readDuringChange).toBe(before);
    expect(await subscriptionsVersion(t.ctx.db, me)).toBe(before);
  });
});
