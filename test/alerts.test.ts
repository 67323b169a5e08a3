import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureEmailChannel } from '../src/features/alerts/repo.js';
import {
  ALERT_FIELDS,
  CREATED_AT,
  DEFAULT_GROUPING,
  DISABLED_WEBHOOK_BODY,
  alertRows,
  createAlert,
  expectNoAlertWritten,
  getWebhook,
  nodeAlert,
  whoAmI,
} from './support/alerts.js';
import { expectError } from './support/error-shape.js';
import { dialect, startTestApp, type TestApp } from './support/harness.js';
import {
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let t: TestApp;
let endpoint: ReceiverWithSecret;
let admin: { id: string; name: string; orgId: string };
let east: string;
let eastLab: string;
let west: string;
let operator: { id: string; key: string; name: string };
let other: { id: string; key: string };
let reader: { id: string; key: string };
let hook: { id: string };
let idleHook: string;
let otherHook: { id: string };

async function createOrg(name: string, parentId?: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/org', {
    body: { name, ...(parentId === undefined ? {} : { parent_id: parentId }) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  t = await startTestApp({ ...receiverAccess() });
  endpoint = await startCorrectReceiver();
  admin = await whoAmI(t);
  east = await createOrg('East');
  eastLab = await createOrg('East lab', east);
  west = await createOrg('West');
  const op = await t.userWithRoles(['operator'], east);
  operator = { ...op, name: (await whoAmI(t, op.key)).name };
  other = await t.userWithRoles(['operator']);
  reader = await t.userWithRoles(['read_only']);
  hook = await enabledWebhook(t, endpoint, { name: 'Ops receiver' });
  const idle = await t.request('POST', '/api/v1/webhook', {
    body: { name: 'Never verified', url: `${endpoint.receiver.url}/idle` },
  });
  expect(idle.status, idle.text).toBe(201);
  idleHook = idle.body.id as string;
  otherHook = await enabledWebhook(t, endpoint, { key: other.key, name: 'Not yours' });
});
afterAll(async () => {
  await endpoint.receiver.close();
  await t.close();
});

describe('POST /api/v1/mysubscriptions/ with the e-mail channel', () => {
  it('answers 201 with exactly the fields of the reference', async () => {
    const before = Date.now();
    const res = await t.request('POST', '/api/v1/mysubscriptions/', { body: nodeAlert(admin.orgId) });
    const after = Date.now();
    expect(res.status, res.text).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(ALERT_FIELDS);
    expect(res.body).toStrictEqual({
      metadata: { labels: { '_service.alert.name': 'Node state change' } },
      name: 'Gateway down',
      type: 'NODE_STATE_CHANGE',
      settings: {
        org_id: admin.orgId,
        alert_me: 'ALIVE,UNREACHABLE',
        duration: '5',
        include_child: 'true',
        group_by: 'organization',
        group_wait: '10',
        group_interval: '300',
        repeat_interval: '14400',
      },
      id: expect.stringMatching(UUID),
      display_type: 'Node state change',
      channel_type: 'EMAIL',
      channel: { id: expect.stringMatching(UUID), name: 'Email' },
      created_at: expect.stringMatching(CREATED_AT),
      created_by: { id: admin.id, name: admin.name },
    });
    const createdAt = Date.parse(res.body.created_at);
    expect(createdAt).toBeGreaterThanOrEqual(before - 1);
    expect(createdAt).toBeLessThanOrEqual(after + 1);
    expect(res.body.channel.id).not.toBe(admin.id);
    expect(res.body.channel.id).not.toBe(res.body.id);
  });

  it('answers GET and the list with the same object', async () => {
    const created = await createAlert(t, nodeAlert(admin.orgId, { name: 'Read back' }));
    const read = await t.request('GET', `/api/v1/mysubscriptions/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toStrictEqual(created);
    const list = await t.request('GET', '/api/v2/mysubscriptions');
    expect(list.status).toBe(200);
    expect(list.body.results.find((alert: any) => alert.id === created.id)).toStrictEqual(created);
  });

  it("uses the caller's one e-mail channel resource for every e-mail alert", async () => {
    const implicit = await createAlert(t, nodeAlert(admin.orgId));
    const explicit = await createAlert(t, nodeAlert(admin.orgId, { channel_type: 'email' }));
    expect(explicit.channel).toEqual(implicit.channel);
    const theirs = await createAlert(t, nodeAlert(east), operator.key);
    expect(theirs.channel.name).toBe('Email');
    expect(theirs.channel.id).not.toBe(implicit.channel.id);
    const rows = await t.ctx.db
      .selectFrom('email_channels')
      .selectAll()
      .where('user_id', '=', admin.id)
      .execute();
    expect(rows.map((row) => row.id)).toEqual([implicit.channel.id]);
  });

  it('makes only one e-mail channel when the first alerts of a user arrive together', async () => {
    const fresh = await t.userWithRoles(['operator']);
    const answers = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        t.request('POST', '/api/v1/mysubscriptions', {
          key: fresh.key,
          body: nodeAlert(admin.orgId, { name: `Burst ${n}` }),
        }),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((res) => res.body.channel.id)).size).toBe(1);
    const rows = await t.ctx.db
      .selectFrom('email_channels')
      .selectAll()
      .where('user_id', '=', fresh.id)
      .execute();
    expect(rows).toHaveLength(1);
  });
});

describe('the e-mail channel made by two transactions at once', () => {
  // PostgreSQL interleaves them: the second's insert waits on the first's uncommitted row, then conflicts.
  // SQLite runs one transaction at a time: the second waits for the first to end, then finds its row.
  it('takes the channel a concurrent transaction committed instead of failing', async () => {
    const fresh = await t.userWithRoles(['operator']);
    const first = await t.ctx.db.startTransaction().execute();
    let second: Promise<string> | undefined;
    try {
      await first
        .insertInto('email_channels')
        .values({ id: '01900000-0000-7000-8000-0000000000e1', user_id: fresh.id, created_at: 1 })
        .execute();
      const pid =
        dialect === 'postgres'
          ? (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(first)).rows[0]?.pid
          : undefined;
      second = t.ctx.db.transaction().execute((trx) => ensureEmailChannel(trx, fresh.id, 2));
      if (pid !== undefined) await waitUntilBlockedBy(Number(pid));
    } finally {
      await first.commit().execute();
    }
    expect(await second).toBe('01900000-0000-7000-8000-0000000000e1');
  });

  /** Until another backend waits for `pid`: the second insert, held up by the first's uncommitted row. */
  async function waitUntilBlockedBy(pid: number): Promise<void> {
    for (let attempt = 0; attempt < 250; attempt += 1) {
      const waiting = await sql<{ n: number | string }>`
        select count(*) as n from pg_stat_activity where ${pid} = any(pg_blocking_pids(pid))`.execute(
        t.ctx.db,
      );
      if (Number(waiting.rows[0]?.n) > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the second transaction never waited for the first');
  }
});

describe('POST /api/v1/mysubscriptions/ with the webhook channel', () => {
  it('answers 201 with the webhook as the channel', async () => {
    const res = await t.request('POST', '/api/v1/mysubscriptions/', {
      body: nodeAlert(admin.orgId, { name: 'To the receiver', channel_type: 'webhook', channel_id: hook.id }),
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toStrictEqual({
      metadata: { labels: { '_service.alert.name': 'Node state change' } },
      name: 'To the receiver',
      type: 'NODE_STATE_CHANGE',
      settings: {
        org_id: admin.orgId,
        alert_me: 'ALIVE,UNREACHABLE',
        duration: '5',
        include_child: 'true',
        group_by: 'none',
        group_wait: '10',
        group_interval: '300',
        repeat_interval: '14400',
      },
      id: expect.stringMatching(UUID),
      display_type: 'Node state change',
      channel_type: 'WEBHOOK',
      channel: { id: hook.id, name: 'Ops receiver' },
      created_at: expect.stringMatching(CREATED_AT),
      created_by: { id: admin.id, name: admin.name },
    });
    const read = await t.request('GET', `/api/v1/mysubscriptions/${res.body.id}`);
    expect(read.body).toStrictEqual(res.body);
    const list = await t.request('GET', '/api/v2/mysubscriptions');
    expect(list.body.results.find((alert: any) => alert.id === res.body.id)).toStrictEqual(res.body);
  });

  it('refuses a webhook that was never verified with the reference 422 body, byte for byte', async () => {
    const res = await expectNoAlertWritten(t, () =>
      t.request('POST', '/api/v1/mysubscriptions/', {
        body: nodeAlert(admin.orgId, { channel_type: 'webhook', channel_id: idleHook }),
      }),
    );
    expect(res.status).toBe(422);
    expect(res.text).toBe(DISABLED_WEBHOOK_BODY);
  });

  it('refuses a webhook that an edit disabled, and shows the new webhook name on existing alerts', async () => {
    const own = await enabledWebhook(t, endpoint, { key: operator.key, name: 'Before' });
    const alert = await createAlert(
      t,
      nodeAlert(east, { channel_type: 'webhook', channel_id: own.id }),
      operator.key,
    );
    const edit = await t.request('PUT', `/api/v1/webhook/${own.id}`, {
      key: operator.key,
      body: { name: 'After' },
    });
    expect(edit.status, edit.text).toBe(200);
    const res = await expectNoAlertWritten(t, () =>
      t.request('POST', '/api/v1/mysubscriptions', {
        key: operator.key,
        body: nodeAlert(east, { channel_type: 'webhook', channel_id: own.id }),
      }),
    );
    expect(res.status).toBe(422);
    expect(res.text).toBe(DISABLED_WEBHOOK_BODY);
    const read = await t.request('GET', `/api/v1/mysubscriptions/${alert.id}`, { key: operator.key });
    expect(read.body.channel).toEqual({ id: own.id, name: 'After' });
  });

  it.each([
    ['an unknown webhook', () => '01900000-0000-7000-8000-000000000000'],
    ["another user's webhook", () => otherHook.id],
  ])('answers 404 for %s', async (_label, channelId) => {
    const res = await expectNoAlertWritten(t, () =>
      t.request('POST', '/api/v1/mysubscriptions', {
        body: nodeAlert(admin.orgId, { channel_type: 'webhook', channel_id: channelId() }),
      }),
    );
    expectError(res, 404, 'NOT_FOUND');
    expect(res.text).not.toContain('Not yours');
  });

  it.each([
    ['webhook without channel_id', { channel_type: 'webhook' }, 'channel_id'],
    ['email with channel_id', { channel_type: 'email', channel_id: 'HOOK' }, 'channel_id'],
    ['channel_id without channel_type (e-mail by default)', { channel_id: 'HOOK' }, 'channel_id'],
    ['upper-case EMAIL with channel_id', { channel_type: 'EMAIL', channel_id: 'HOOK' }, 'channel_id'],
    ['upper-case WEBHOOK without channel_id', { channel_type: 'WEBHOOK', channel_id: null }, 'channel_id'],
    ['a numeric channel_type', { channel_type: 1 }, 'channel_type'],
    ['an empty channel_type', { channel_type: '' }, 'channel_type'],
    ['an unknown channel', { channel_type: 'sms' }, 'channel_type'],
  ])('answers 400 for %s', async (_label, channel, field) => {
    const body = { ...nodeAlert(admin.orgId), ...channel } as Record<string, unknown>;
    if (body.channel_id === 'HOOK') body.channel_id = hook.id;
    const res = await expectNoAlertWritten(t, () => t.request('POST', '/api/v1/mysubscriptions', { body }));
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details.map((detail: any) => detail.field)).toContain(field);
  });
});

describe('settings.org_id', () => {
  it.each([
    ["the caller's organization", () => east],
    ['an organization below it', () => eastLab],
  ])('accepts %s', async (_label, orgId) => {
    const alert = await createAlert(t, nodeAlert(orgId()), operator.key);
    expect(alert.settings.org_id).toBe(orgId());
  });

  it.each([
    ['the parent organization', () => admin.orgId],
    ['a sibling organization', () => west],
    ['an unknown organization', () => '01900000-0000-7000-8000-000000000001'],
  ])('answers 404 for %s', async (_label, orgId) => {
    const res = await expectNoAlertWritten(t, () =>
      t.request('POST', '/api/v1/mysubscriptions', { key: operator.key, body: nodeAlert(orgId()) }),
    );
    expectError(res, 404, 'NOT_FOUND');
  });
});

describe('GET /api/v2/mysubscriptions', () => {
  it("answers {total_count, results} with the caller's own alerts only, oldest first", async () => {
    const fresh = await t.userWithRoles(['operator']);
    const first = await createAlert(t, nodeAlert(admin.orgId, { name: 'First' }), fresh.key);
    const second = await createAlert(t, nodeAlert(admin.orgId, { name: 'Second' }), fresh.key);
    await createAlert(t, nodeAlert(admin.orgId, { name: 'Someone else' }), other.key);
    const res = await t.request('GET', '/api/v2/mysubscriptions', { key: fresh.key });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ total_count: 2, results: [first, second] });
  });

  it('answers an empty list to a user without alerts', async () => {
    const res = await t.request('GET', '/api/v2/mysubscriptions', { key: reader.key });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ total_count: 0, results: [] });
  });
});

describe('DELETE /api/v1/mysubscriptions/{id}', () => {
  it('answers {id, message, status: "SUCCESS"} and the alert is gone', async () => {
    const alert = await createAlert(t, nodeAlert(admin.orgId, { name: 'Short-lived' }));
    const res = await t.request('DELETE', `/api/v1/mysubscriptions/${alert.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toStrictEqual({ id: alert.id, message: expect.any(String), status: 'SUCCESS' });
    expect(res.body.message.length).toBeGreaterThan(0);
    expectError(await t.request('GET', `/api/v1/mysubscriptions/${alert.id}`), 404, 'NOT_FOUND');
    expectError(await t.request('DELETE', `/api/v1/mysubscriptions/${alert.id}`), 404, 'NOT_FOUND');
    const list = await t.request('GET', '/api/v2/mysubscriptions');
    expect(list.body.results.map((a: any) => a.id)).not.toContain(alert.id);
    const row = await t.ctx.db
      .selectFrom('alerts')
      .select('id')
      .where('id', '=', alert.id)
      .executeTakeFirst();
    expect(row).toBeUndefined();
  });
});

describe('DELETE /api/v1/mysubscriptions/{id} sent several times at once', () => {
  it('succeeds once; the others find nothing (404)', async () => {
    for (let round = 0; round < 5; round += 1) {
      const alert = await createAlert(t, nodeAlert(admin.orgId, { name: `Raced ${round}` }));
      const answers = await Promise.all(
        [1, 2, 3].map(() => t.request('DELETE', `/api/v1/mysubscriptions/${alert.id}`)),
      );
      expect(answers.map((res) => res.status).sort()).toEqual([200, 404, 404]);
    }
  });
});

describe('create and edit racing a delete', () => {
  /**
   * Runs `hook` right after the first transaction whose commit makes `committed` true, before the request
   * that ran it answers. Background work may commit transactions of its own meanwhile; they pass untouched.
   */
  function afterCommitOf(committed: () => Promise<boolean>, hook: () => Promise<unknown>): void {
    const db = t.ctx.db;
    const transaction = db.transaction.bind(db);
    db.transaction = () => {
      const builder = transaction();
      const execute = builder.execute.bind(builder);
      return Object.assign(builder, {
        execute: async (callback: Parameters<typeof execute>[0]) => {
          const result = await execute(callback);
          if (Object.hasOwn(db, 'transaction') && (await committed())) {
            Reflect.deleteProperty(db, 'transaction');
            await hook();
          }
          return result;
        },
      });
    };
  }

  const alertStored = async (userId: string, name: string) =>
    (await t.ctx.db
      .selectFrom('alerts')
      .select('id')
      .where('user_id', '=', userId)
      .where('name', '=', name)
      .executeTakeFirst()) !== undefined;

  it('answers a create with the alert its transaction stored, though it was deleted since', async () => {
    const user = await t.userWithRoles(['operator']);
    afterCommitOf(
      () => alertStored(user.id, 'Gone at once'),
      () => t.ctx.db.deleteFrom('alerts').where('user_id', '=', user.id).execute(),
    );
    const res = await t.request('POST', '/api/v1/mysubscriptions', {
      key: user.key,
      body: nodeAlert(admin.orgId, { name: 'Gone at once' }),
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ name: 'Gone at once', created_by: { id: user.id } });
    expectError(
      await t.request('GET', `/api/v1/mysubscriptions/${res.body.id}`, { key: user.key }),
      404,
      'NOT_FOUND',
    );
  });

  it('answers an edit with the alert its transaction stored, though it was deleted since', async () => {
    const user = await t.userWithRoles(['operator']);
    const alert = await createAlert(t, nodeAlert(admin.orgId, { name: 'Before' }), user.key);
    afterCommitOf(
      () => alertStored(user.id, 'After'),
      () => t.ctx.db.deleteFrom('alerts').where('id', '=', alert.id).execute(),
    );
    const res = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
      key: user.key,
      body: { name: 'After' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toStrictEqual({ ...alert, name: 'After' });
    expectError(
      await t.request('GET', `/api/v1/mysubscriptions/${alert.id}`, { key: user.key }),
      404,
      'NOT_FOUND',
    );
  });
});

describe('ownership', () => {
  it("answers 404 on get, edit and delete of another user's alert and leaves it alone", async () => {
    const theirs = await createAlert(t, nodeAlert(east, { name: 'Operator only' }), operator.key);
    for (const key of [other.key, undefined]) {
      const as = key === undefined ? {} : { key };
      expectError(await t.request('GET', `/api/v1/mysubscriptions/${theirs.id}`, as), 404, 'NOT_FOUND');
      const put = await expectNoAlertWritten(t, () =>
        t.request('PUT', `/api/v1/mysubscriptions/${theirs.id}`, { ...as, body: { name: 'Hijacked' } }),
      );
      expectError(put, 404, 'NOT_FOUND');
      const del = await expectNoAlertWritten(t, () =>
        t.request('DELETE', `/api/v1/mysubscriptions/${theirs.id}`, as),
      );
      expectError(del, 404, 'NOT_FOUND');
      const list = await t.request('GET', '/api/v2/mysubscriptions', as);
      expect(list.body.results.map((a: any) => a.id)).not.toContain(theirs.id);
    }
    const still = await t.request('GET', `/api/v1/mysubscriptions/${theirs.id}`, { key: operator.key });
    expect(still.body).toStrictEqual(theirs);
  });

  it('answers 404 for an alert that does not exist', async () => {
    const missing = '01900000-0000-7000-8000-000000000002';
    expectError(await t.request('GET', `/api/v1/mysubscriptions/${missing}`), 404, 'NOT_FOUND');
    expectError(
      await t.request('PUT', `/api/v1/mysubscriptions/${missing}`, { body: { name: 'x' } }),
      404,
      'NOT_FOUND',
    );
    expectError(await t.request('DELETE', `/api/v1/mysubscriptions/${missing}`), 404, 'NOT_FOUND');
  });
});

describe('roles', () => {
  it('lets Read Only list and read but not create, edit or delete (403, nothing written)', async () => {
    const target = await createAlert(t, nodeAlert(admin.orgId, { name: 'Admin alert' }));
    const writes = [
      () => t.request('POST', '/api/v1/mysubscriptions/', { key: reader.key, body: nodeAlert(admin.orgId) }),
      () => t.request('POST', '/api/v1/mysubscriptions/', { key: reader.key, body: { nonsense: true } }),
      () =>
        t.request('PUT', `/api/v1/mysubscriptions/${target.id}`, { key: reader.key, body: { name: 'No' } }),
      () => t.request('DELETE', `/api/v1/mysubscriptions/${target.id}`, { key: reader.key }),
    ];
    for (const send of writes) expectError(await expectNoAlertWritten(t, send), 403, 'FORBIDDEN');
    expect((await t.request('GET', '/api/v2/mysubscriptions', { key: reader.key })).status).toBe(200);
    // Reading is allowed; the alert is simply not theirs.
    expectError(
      await t.request('GET', `/api/v1/mysubscriptions/${target.id}`, { key: reader.key }),
      404,
      'NOT_FOUND',
    );
  });

  it('lets an Operator create, read, edit and delete', async () => {
    const created = await t.request('POST', '/api/v1/mysubscriptions/', {
      key: operator.key,
      body: nodeAlert(east, { name: 'Operator alert' }),
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.created_by).toEqual({ id: operator.id, name: operator.name });
    const read = await t.request('GET', `/api/v1/mysubscriptions/${created.body.id}`, { key: operator.key });
    expect(read.status).toBe(200);
    const edited = await t.request('PUT', `/api/v1/mysubscriptions/${created.body.id}`, {
      key: operator.key,
      body: { name: 'Renamed' },
    });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body.name).toBe('Renamed');
    const deleted = await t.request('DELETE', `/api/v1/mysubscriptions/${created.body.id}`, {
      key: operator.key,
    });
    expect(deleted.status).toBe(200);
  });

  it('answers 401 on every route without a key or with an unknown one', async () => {
    const id = '01900000-0000-7000-8000-000000000003';
    for (const key of [null, 'ew_not-a-real-key-0123456789abcdefghijklmnop']) {
      const answers = [
        await t.request('POST', '/api/v1/mysubscriptions/', { key, body: nodeAlert(admin.orgId) }),
        await t.request('GET', '/api/v2/mysubscriptions', { key }),
        await t.request('GET', `/api/v1/mysubscriptions/${id}`, { key }),
        await t.request('PUT', `/api/v1/mysubscriptions/${id}`, { key, body: { name: 'x' } }),
        await t.request('DELETE', `/api/v1/mysubscriptions/${id}`, { key }),
      ];
      for (const res of answers) expectError(res, 401, 'UNAUTHORIZED');
    }
  });
});

describe('PUT /api/v1/mysubscriptions/{id}', () => {
  async function fresh(overrides = {}) {
    return createAlert(t, {
      ...nodeAlert(admin.orgId, { name: 'Editable' }),
      settings: { org_id: admin.orgId, alert_me: 'ALIVE', duration: 15, include_child: false },
      ...overrides,
    });
  }

  async function put(id: string, body: unknown, key?: string) {
    return t.request('PUT', `/api/v1/mysubscriptions/${id}`, { body, ...(key === undefined ? {} : { key }) });
  }

  it('changes the name only and keeps everything else', async () => {
    const alert = await fresh();
    const res = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, { body: { name: 'New name' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toStrictEqual({ ...alert, name: 'New name' });
    const read = await t.request('GET', `/api/v1/mysubscriptions/${alert.id}`);
    expect(read.body).toStrictEqual(res.body);
  });

  it('merges the settings over the stored ones field by field, keeping every field left out', async () => {
    const alert = await fresh();
    const states = await put(alert.id, { settings: { alert_me: 'UNREACHABLE' } });
    expect(states.status, states.text).toBe(200);
    expect(states.body).toStrictEqual({
      ...alert,
      settings: {
        org_id: admin.orgId,
        alert_me: 'UNREACHABLE',
        duration: '15',
        include_child: 'false',
        ...DEFAULT_GROUPING.email,
      },
    });
    const org = await put(alert.id, { settings: { org_id: east, include_child: 'true' } });
    expect(org.status, org.text).toBe(200);
    expect(org.body.settings).toStrictEqual({
      org_id: east,
      alert_me: 'UNREACHABLE',
      duration: '15',
      include_child: 'true',
      ...DEFAULT_GROUPING.email,
    });
    const duration = await put(alert.id, { settings: { duration: 0 } });
    expect(duration.status, duration.text).toBe(200);
    expect(duration.body).toStrictEqual({
      ...alert,
      settings: {
        org_id: east,
        alert_me: 'UNREACHABLE',
        duration: '0',
        include_child: 'true',
        ...DEFAULT_GROUPING.email,
      },
    });
    const read = await t.request('GET', `/api/v1/mysubscriptions/${alert.id}`);
    expect(read.body).toStrictEqual(duration.body);
  });

  it('takes an empty settings object beside another field as no change to the settings', async () => {
    const alert = await fresh();
    const res = await put(alert.id, { name: 'Settings untouched', settings: {} });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toStrictEqual({ ...alert, name: 'Settings untouched' });
  });

  it("ignores type when it is the alert's own", async () => {
    const alert = await fresh();
    const res = await put(alert.id, { name: 'Same type', type: 'NODE_STATE_CHANGE' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toStrictEqual({ ...alert, name: 'Same type' });
  });

  it('refuses another type with a message that says what to do instead', async () => {
    const alert = await fresh();
    const res = await expectNoAlertWritten(t, () => put(alert.id, { name: 'New type', type: 'CERT_EXPIRY' }));
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.message).toBe(
      "An alert's type cannot be changed; create a new alert of that type and delete this one.",
    );
    expect(res.body.details).toEqual([
      { field: 'type', message: expect.stringContaining('NODE_STATE_CHANGE') },
    ]);
  });

  it.each([
    ['an empty settings object', { settings: {} }, ['settings']],
    ["the alert's own type", { type: 'NODE_STATE_CHANGE' }, ['type']],
    [
      "an empty settings object and the alert's own type",
      { settings: {}, type: 'NODE_STATE_CHANGE' },
      ['settings', 'type'],
    ],
  ])('answers 400 "nothing to change" for %s alone', async (_label, body, fields) => {
    const alert = await fresh();
    const res = await expectNoAlertWritten(t, () => put(alert.id, body));
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.message).toMatch(/^Nothing to change/);
    expect(res.body.details.map((detail: any) => detail.field)).toEqual(fields);
  });

  it('checks for an empty settings object before looking for the alert, and the type after', async () => {
    const missing = '01900000-0000-7000-8000-000000000004';
    expectError(await put(missing, { settings: {} }), 400, 'BAD_REQUEST');
    expectError(await put(missing, { type: 'NODE_STATE_CHANGE' }), 404, 'NOT_FOUND');
  });

  it('moves an alert to an enabled webhook and back to e-mail', async () => {
    const alert = await fresh();
    const toHook = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
      body: { channel_type: 'webhook', channel_id: hook.id },
    });
    expect(toHook.status, toHook.text).toBe(200);
    // The grouping never chosen follows the channel (docs/rules/alerts-and-fleet.md#grouping).
    expect(toHook.body).toStrictEqual({
      ...alert,
      settings: { ...alert.settings, group_by: 'none' },
      channel_type: 'WEBHOOK',
      channel: { id: hook.id, name: 'Ops receiver' },
    });
    const back = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
      body: { channel_type: 'email' },
    });
    expect(back.status, back.text).toBe(200);
    expect(back.body).toStrictEqual(alert);
  });

  it('moves an alert to a webhook by channel_id alone; channel_type webhook without channel_id keeps it there', async () => {
    const alert = await fresh();
    const moved = await put(alert.id, { channel_id: hook.id });
    expect(moved.status, moved.text).toBe(200);
    const onHook = {
      ...alert,
      settings: { ...alert.settings, group_by: 'none' },
      channel_type: 'WEBHOOK',
      channel: { id: hook.id, name: 'Ops receiver' },
    };
    expect(moved.body).toStrictEqual(onHook);
    const kept = await put(alert.id, { channel_type: 'webhook', name: 'Still on the hook' });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body).toStrictEqual({ ...onHook, name: 'Still on the hook' });
    const renamed = await put(alert.id, { name: 'Renamed' });
    expect(renamed.body).toStrictEqual({ ...onHook, name: 'Renamed' });
  });

  it('refuses a disabled webhook with the reference 422 body and changes nothing', async () => {
    const alert = await fresh();
    const res = await expectNoAlertWritten(t, () =>
      t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
        body: { name: 'Moved', channel_type: 'webhook', channel_id: idleHook },
      }),
    );
    expect(res.status).toBe(422);
    expect(res.text).toBe(DISABLED_WEBHOOK_BODY);
  });

  it.each([
    ['an unknown webhook', () => '01900000-0000-7000-8000-000000000000'],
    ["another user's webhook", () => otherHook.id],
  ])('answers 404 for a move onto %s and changes nothing', async (_label, channelId) => {
    const alert = await fresh();
    const res = await expectNoAlertWritten(t, () =>
      put(alert.id, { name: 'Moved', channel_id: channelId() }),
    );
    expectError(res, 404, 'NOT_FOUND');
    expect(res.text).not.toContain('Not yours');
  });

  it('lets an alert stay on a webhook disabled since, and refuses moving an alert onto it', async () => {
    const own = await enabledWebhook(t, endpoint, { key: other.key, name: 'Will be edited' });
    const spare = await enabledWebhook(t, endpoint, { key: other.key, name: 'Spare' });
    const alert = await createAlert(
      t,
      nodeAlert(admin.orgId, { channel_type: 'webhook', channel_id: own.id }),
      other.key,
    );
    const onSpare = await createAlert(
      t,
      nodeAlert(admin.orgId, { channel_type: 'webhook', channel_id: spare.id }),
      other.key,
    );
    const edit = await t.request('PUT', `/api/v1/webhook/${own.id}`, {
      key: other.key,
      body: { name: 'Edited' },
    });
    expect(edit.status, edit.text).toBe(200);
    expect((await getWebhook(t, own.id, other.key)).body.is_enabled).toBe(false);

    const renamed = await put(alert.id, { name: 'Renamed' }, other.key);
    expect(renamed.status, renamed.text).toBe(200);
    const stays = { ...alert, name: 'Renamed', channel: { id: own.id, name: 'Edited' } };
    expect(renamed.body).toStrictEqual(stays);
    const settings = await put(
      alert.id,
      { settings: { alert_me: 'UNREACHABLE' }, channel_type: 'webhook', channel_id: own.id },
      other.key,
    );
    expect(settings.status, settings.text).toBe(200);
    expect(settings.body).toStrictEqual({
      ...stays,
      settings: { ...alert.settings, alert_me: 'UNREACHABLE' },
    });

    const fromWebhook = await expectNoAlertWritten(t, () =>
      put(onSpare.id, { channel_id: own.id }, other.key),
    );
    expect(fromWebhook.text).toBe(DISABLED_WEBHOOK_BODY);
    const toEmail = await put(alert.id, { name: 'By e-mail', channel_type: 'email' }, other.key);
    expect(toEmail.status, toEmail.text).toBe(200);
    expect(toEmail.body).toMatchObject({
      name: 'By e-mail',
      channel_type: 'EMAIL',
      channel: { name: 'Email' },
    });
    const back = await expectNoAlertWritten(t, () => put(alert.id, { channel_id: own.id }, other.key));
    expect(back.text).toBe(DISABLED_WEBHOOK_BODY);
  });

  it.each([
    ['an empty object', { body: {} }, ''],
    ['no body at all', { payload: '', headers: { 'content-type': 'application/json' } }, ''],
    ['another type', { body: { type: 'CERT_EXPIRY' } }, 'type'],
    ["the alert's own type alone", { body: { type: 'NODE_STATE_CHANGE' } }, 'type'],
    ['an unknown type with a name', { body: { name: 'x', type: 'DISK_FULL' } }, 'type'],
    ['an empty settings object alone', { body: { settings: {} } }, 'settings'],
    ['a state of another type', { body: { settings: { alert_me: 'CONNECTED' } } }, 'settings.alert_me'],
    ['settings that blank alert_me', { body: { settings: { alert_me: ' , ' } } }, 'settings.alert_me'],
    ['an empty org_id', { body: { settings: { org_id: '' } } }, 'settings.org_id'],
    ['a duration over a week', { body: { settings: { duration: 10081 } } }, 'settings.duration'],
    ['an unknown settings field', { body: { settings: { threshold: 3 } } }, 'settings.threshold'],
    ['an empty name', { body: { name: '' } }, 'name'],
    ['email with channel_id', { body: { channel_type: 'email', channel_id: 'HOOK' } }, 'channel_id'],
    ['webhook without channel_id on an e-mail alert', { body: { channel_type: 'webhook' } }, 'channel_id'],
    ['an unknown field', { body: { name: 'x', created_by: 'me' } }, 'created_by'],
  ])('answers 400 for %s and changes nothing', async (_label, request, field) => {
    const alert = await fresh();
    const json = JSON.stringify(request)
      .replaceAll('"ORG"', JSON.stringify(admin.orgId))
      .replaceAll('"HOOK"', JSON.stringify(hook.id));
    const res = await expectNoAlertWritten(t, () =>
      t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, JSON.parse(json)),
    );
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details.map((detail: any) => detail.field)).toContain(field);
  });

  it('accepts and ignores a duration for a type that takes none', async () => {
    const alert = await createAlert(t, {
      name: 'Certificates',
      type: 'CERT_EXPIRY',
      settings: { org_id: admin.orgId },
    });
    for (const settings of [{ duration: 5 }, { org_id: admin.orgId, duration: 5 }]) {
      const res = await put(alert.id, { settings });
      expect(res.status, res.text).toBe(200);
      expect(res.body.settings).toStrictEqual({
        org_id: admin.orgId,
        alert_me: '80,100',
        include_child: 'true',
        ...DEFAULT_GROUPING.email,
      });
    }
  });

  it.each([
    ['with the other settings', { alert_me: 'ALIVE' }],
    ['alone', {}],
  ])("answers 404 for settings.org_id outside the caller's organizations %s", async (_label, rest) => {
    const alert = await createAlert(t, nodeAlert(east), operator.key);
    const body = { settings: { org_id: west, ...rest } };
    const res = await expectNoAlertWritten(t, () => put(alert.id, body, operator.key));
    expectError(res, 404, 'NOT_FOUND');
  });
});

describe('paths', () => {
  it('treats the routes with and without a trailing slash alike', async () => {
    const withSlash = await t.request('POST', '/api/v1/mysubscriptions/', { body: nodeAlert(admin.orgId) });
    const without = await t.request('POST', '/api/v1/mysubscriptions', { body: nodeAlert(admin.orgId) });
    expect([withSlash.status, without.status]).toEqual([201, 201]);
    const id = withSlash.body.id as string;
    const list = await t.request('GET', '/api/v2/mysubscriptions/');
    expect(list.body).toEqual((await t.request('GET', '/api/v2/mysubscriptions')).body);
    expect((await t.request('GET', `/api/v1/mysubscriptions/${id}/`)).body).toStrictEqual(withSlash.body);
    const put = await t.request('PUT', `/api/v1/mysubscriptions/${id}/`, { body: { name: 'Slashed' } });
    expect(put.status).toBe(200);
    expect((await t.request('DELETE', `/api/v1/mysubscriptions/${id}/`)).status).toBe(200);
  });

  it('documents every alert route in the OpenAPI description', async () => {
    const res = await t.request('GET', '/openapi.json', { key: null });
    expect(res.body.paths['/api/v1/mysubscriptions']).toHaveProperty('post');
    expect(res.body.paths['/api/v2/mysubscriptions']).toHaveProperty('get');
    expect(Object.keys(res.body.paths['/api/v1/mysubscriptions/{id}']).sort()).toEqual([
      'delete',
      'get',
      'put',
    ]);
  });

  it('keeps the alerts table consistent with what the API shows', async () => {
    const list = await t.request('GET', '/api/v2/mysubscriptions?size=100');
    const listed = list.body.results.map((a: any) => a.id);
    const stored = (await alertRows(t)) as { id: string; user_id: string }[];
    expect(list.body.total_count).toBe(listed.length);
    expect(listed.sort()).toEqual(
      stored
        .filter((row) => row.user_id === admin.id)
        .map((row) => row.id)
        .sort(),
    );
  });
});
