import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALERT_FIELDS,
  CREATED_AT,
  DISABLED_WEBHOOK_BODY,
  alertRows,
  createAlert,
  expectNoAlertWritten,
  nodeAlert,
  whoAmI,
} from './support/alerts.js';
import { expectError } from './support/error-shape.js';
import { startTestApp, type TestApp } from './support/harness.js';
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
      settings: { org_id: admin.orgId, alert_me: 'ALIVE,UNREACHABLE', duration: '5', include_child: 'true' },
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
      settings: { org_id: admin.orgId, alert_me: 'ALIVE,UNREACHABLE', duration: '5', include_child: 'true' },
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
    ['upper-case EMAIL', { channel_type: 'EMAIL' }, 'channel_type'],
    ['upper-case WEBHOOK', { channel_type: 'WEBHOOK', channel_id: 'HOOK' }, 'channel_type'],
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
  it("answers {results} with the caller's own alerts only, oldest first", async () => {
    const fresh = await t.userWithRoles(['operator']);
    const first = await createAlert(t, nodeAlert(admin.orgId, { name: 'First' }), fresh.key);
    const second = await createAlert(t, nodeAlert(admin.orgId, { name: 'Second' }), fresh.key);
    await createAlert(t, nodeAlert(admin.orgId, { name: 'Someone else' }), other.key);
    const res = await t.request('GET', '/api/v2/mysubscriptions', { key: fresh.key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['results']);
    expect(res.body.results).toStrictEqual([first, second]);
  });

  it('answers an empty list to a user without alerts', async () => {
    const res = await t.request('GET', '/api/v2/mysubscriptions', { key: reader.key });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ results: [] });
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

  it('changes the name only and keeps everything else', async () => {
    const alert = await fresh();
    const res = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, { body: { name: 'New name' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toStrictEqual({ ...alert, name: 'New name' });
    const read = await t.request('GET', `/api/v1/mysubscriptions/${alert.id}`);
    expect(read.body).toStrictEqual(res.body);
  });

  it('replaces the settings whole, with the same defaults as creation', async () => {
    const alert = await fresh();
    const res = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
      body: { settings: { org_id: east, alert_me: 'UNREACHABLE' } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toStrictEqual({
      ...alert,
      settings: { org_id: east, alert_me: 'UNREACHABLE', duration: '0', include_child: 'true' },
    });
  });

  it('moves an alert to an enabled webhook and back to e-mail', async () => {
    const alert = await fresh();
    const toHook = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
      body: { channel_type: 'webhook', channel_id: hook.id },
    });
    expect(toHook.status, toHook.text).toBe(200);
    expect(toHook.body).toStrictEqual({
      ...alert,
      channel_type: 'WEBHOOK',
      channel: { id: hook.id, name: 'Ops receiver' },
    });
    const back = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
      body: { channel_type: 'email' },
    });
    expect(back.status, back.text).toBe(200);
    expect(back.body).toStrictEqual(alert);
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

  it('holds an edited alert to every create rule, so a rename on a since-disabled webhook is 422', async () => {
    const own = await enabledWebhook(t, endpoint, { key: other.key, name: 'Will be edited' });
    const alert = await createAlert(
      t,
      nodeAlert(admin.orgId, { channel_type: 'webhook', channel_id: own.id }),
      other.key,
    );
    const edit = await t.request('PUT', `/api/v1/webhook/${own.id}`, {
      key: other.key,
      body: { name: 'Edited' },
    });
    expect(edit.status, edit.text).toBe(200);
    const res = await expectNoAlertWritten(t, () =>
      t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, { key: other.key, body: { name: 'Renamed' } }),
    );
    expect(res.text).toBe(DISABLED_WEBHOOK_BODY);
    const toEmail = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
      key: other.key,
      body: { name: 'Renamed', channel_type: 'email' },
    });
    expect(toEmail.status, toEmail.text).toBe(200);
    expect(toEmail.body).toMatchObject({
      name: 'Renamed',
      channel_type: 'EMAIL',
      channel: { name: 'Email' },
    });
  });

  it.each([
    ['an empty object', { body: {} }, ''],
    ['no body at all', { payload: '', headers: { 'content-type': 'application/json' } }, ''],
    ['a new type', { body: { type: 'CERT_EXPIRY' } }, 'type'],
    ['the same type with a name', { body: { name: 'x', type: 'NODE_STATE_CHANGE' } }, 'type'],
    [
      'a state of another type',
      { body: { settings: { org_id: 'ORG', alert_me: 'CONNECTED' } } },
      'settings.alert_me',
    ],
    ['settings without alert_me', { body: { settings: { org_id: 'ORG' } } }, 'settings.alert_me'],
    [
      'a duration over a week',
      { body: { settings: { org_id: 'ORG', alert_me: 'ALIVE', duration: 10081 } } },
      'settings.duration',
    ],
    ['an empty name', { body: { name: '' } }, 'name'],
    ['channel_id alone (e-mail by default)', { body: { channel_id: 'HOOK' } }, 'channel_id'],
    ['webhook without channel_id', { body: { channel_type: 'webhook' } }, 'channel_id'],
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

  it('refuses settings that take no duration for the alert type', async () => {
    const alert = await createAlert(t, {
      name: 'Certificates',
      type: 'CERT_EXPIRY',
      settings: { org_id: admin.orgId },
    });
    const res = await expectNoAlertWritten(t, () =>
      t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
        body: { settings: { org_id: admin.orgId, duration: 5 } },
      }),
    );
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details).toEqual([{ field: 'settings.duration', message: expect.any(String) }]);
  });

  it("answers 404 for settings.org_id outside the caller's organizations", async () => {
    const alert = await createAlert(t, nodeAlert(east), operator.key);
    const res = await expectNoAlertWritten(t, () =>
      t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, {
        key: operator.key,
        body: { settings: { org_id: west, alert_me: 'ALIVE' } },
      }),
    );
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
    const listed = (await t.request('GET', '/api/v2/mysubscriptions')).body.results.map((a: any) => a.id);
    const stored = (await alertRows(t)) as { id: string; user_id: string }[];
    expect(listed.sort()).toEqual(
      stored
        .filter((row) => row.user_id === admin.id)
        .map((row) => row.id)
        .sort(),
    );
  });
});
