import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import {
  alertRows,
  countAlerts,
  createAlert,
  expectNoAlertWritten,
  getWebhook,
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

let endpoint: ReceiverWithSecret;
let t: TestApp;
let limited: TestApp;
let org: string;

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  t = await startTestApp({ ...receiverAccess() });
  limited = await startTestApp({
    ...receiverAccess(),
    env: { ...receiverAccess().env, MAX_WEBHOOK_ALERTS_PER_USER: '2' },
  });
  org = (await whoAmI(t)).orgId;
});
afterAll(async () => {
  await limited.close();
  await t.close();
  await endpoint.receiver.close();
});

function onHook(orgId: string, webhookId: string, name = 'Via webhook') {
  return nodeAlert(orgId, { name, channel_type: 'webhook', channel_id: webhookId });
}

async function subscriptionCount(app: TestApp, webhookId: string, key: string): Promise<number> {
  const res = await getWebhook(app, webhookId, key);
  expect(res.status, res.text).toBe(200);
  return res.body.subscription_count as number;
}

async function listedCounts(app: TestApp, key: string): Promise<Record<string, number>> {
  const res = await app.request('GET', '/api/v2/webhook', { key });
  expect(res.status, res.text).toBe(200);
  return Object.fromEntries(res.body.map((hook: any) => [hook.id, hook.subscription_count]));
}

describe('subscription_count of a webhook', () => {
  it('is the live number of alerts using the webhook, on get and list', async () => {
    const user = await t.userWithRoles(['operator']);
    const one = await enabledWebhook(t, endpoint, { key: user.key, name: 'One' });
    const two = await enabledWebhook(t, endpoint, { key: user.key, name: 'Two' });
    expect(await listedCounts(t, user.key)).toEqual({ [one.id]: 0, [two.id]: 0 });

    const a = await createAlert(t, onHook(org, one.id, 'A'), user.key);
    await createAlert(t, onHook(org, one.id, 'B'), user.key);
    const c = await createAlert(t, onHook(org, two.id, 'C'), user.key);
    await createAlert(t, nodeAlert(org, { name: 'By e-mail' }), user.key);
    expect(await subscriptionCount(t, one.id, user.key)).toBe(2);
    expect(await subscriptionCount(t, two.id, user.key)).toBe(1);
    expect(await listedCounts(t, user.key)).toEqual({ [one.id]: 2, [two.id]: 1 });

    expect((await t.request('DELETE', `/api/v1/mysubscriptions/${a.id}`, { key: user.key })).status).toBe(
      200,
    );
    expect(await subscriptionCount(t, one.id, user.key)).toBe(1);

    const moved = await t.request('PUT', `/api/v1/mysubscriptions/${c.id}`, {
      key: user.key,
      body: { channel_type: 'webhook', channel_id: one.id },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(await listedCounts(t, user.key)).toEqual({ [one.id]: 2, [two.id]: 0 });

    const toEmail = await t.request('PUT', `/api/v1/mysubscriptions/${c.id}`, {
      key: user.key,
      body: { channel_type: 'email' },
    });
    expect(toEmail.status, toEmail.text).toBe(200);
    expect(await listedCounts(t, user.key)).toEqual({ [one.id]: 1, [two.id]: 0 });
  });
});

describe('DELETE /api/v1/user/webhook/{id} of a webhook used by alerts', () => {
  let user: { key: string; id: string };
  let used: { id: string };
  let usedAlerts: string[];
  let emailAlert: { id: string };

  beforeAll(async () => {
    user = await t.userWithRoles(['operator']);
    used = await enabledWebhook(t, endpoint, { key: user.key, name: 'Used' });
    usedAlerts = [];
    for (const name of ['First', 'Second'])
      usedAlerts.push((await createAlert(t, onHook(org, used.id, name), user.key)).id);
    emailAlert = await createAlert(t, nodeAlert(org, { name: 'Stays' }), user.key);
  });

  it.each([
    ['without force', ''],
    ['with force=false', '?force=false'],
  ])('answers 409 %s and removes nothing', async (_label, query) => {
    const before = await alertRows(t);
    const res = await t.request('DELETE', `/api/v1/user/webhook/${used.id}${query}`, { key: user.key });
    expectError(res, 409, 'CONFLICT');
    expect(await alertRows(t)).toEqual(before);
    expect(await subscriptionCount(t, used.id, user.key)).toBe(2);
    for (const id of usedAlerts) {
      expect((await t.request('GET', `/api/v1/mysubscriptions/${id}`, { key: user.key })).status).toBe(200);
    }
  });

  it('removes the webhook and its alerts with force=true and names the removed alerts', async () => {
    const total = await countAlerts(t);
    const res = await t.request('DELETE', `/api/v1/user/webhook/${used.id}`, {
      key: user.key,
      query: { force: 'true' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toStrictEqual({
      id: used.id,
      message: expect.any(String),
      status: 'SUCCESS',
      removed_alert_ids: [...usedAlerts].sort(),
    });
    expectError(await getWebhook(t, used.id, user.key), 404, 'NOT_FOUND');
    for (const id of usedAlerts) {
      expectError(
        await t.request('GET', `/api/v1/mysubscriptions/${id}`, { key: user.key }),
        404,
        'NOT_FOUND',
      );
    }
    expect(await countAlerts(t)).toBe(total - usedAlerts.length);
    const list = await t.request('GET', '/api/v2/mysubscriptions', { key: user.key });
    expect(list.body.results.map((alert: any) => alert.id)).toEqual([emailAlert.id]);
  });

  it('removes an unused webhook without force, and says no alert went with force=true', async () => {
    const plain = await enabledWebhook(t, endpoint, { key: user.key, name: 'Unused' });
    const res = await expectNoAlertWritten(t, () =>
      t.request('DELETE', `/api/v1/user/webhook/${plain.id}`, { key: user.key }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toStrictEqual({ id: plain.id, message: expect.any(String), status: 'SUCCESS' });
    const forced = await enabledWebhook(t, endpoint, { key: user.key, name: 'Unused too' });
    const again = await t.request('DELETE', `/api/v1/user/webhook/${forced.id}?force=true`, {
      key: user.key,
    });
    expect(again.status, again.text).toBe(200);
    expect(again.body.removed_alert_ids).toEqual([]);
  });
});

describe('MAX_WEBHOOK_ALERTS_PER_USER', () => {
  it('defaults to 10', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).maxWebhookAlertsPerUser).toBe(10);
    expect(t.config.maxWebhookAlertsPerUser).toBe(10);
  });

  it('lets a user have 10 webhook alerts by default and refuses the 11th with 422', async () => {
    const user = await t.userWithRoles(['operator']);
    const hook = await enabledWebhook(t, endpoint, { key: user.key });
    for (let n = 1; n <= 10; n += 1) await createAlert(t, onHook(org, hook.id, `Alert ${n}`), user.key);
    const res = await expectNoAlertWritten(t, () =>
      t.request('POST', '/api/v1/mysubscriptions/', {
        key: user.key,
        body: onHook(org, hook.id, 'Eleventh'),
      }),
    );
    expectError(res, 422, 'UNPROCESSABLE_ENTITY');
  });

  describe('set to 2', () => {
    let limitedOrg: string;
    beforeAll(async () => {
      limitedOrg = (await whoAmI(limited)).orgId;
    });

    it('counts webhook alerts per user across webhooks, not e-mail alerts', async () => {
      const user = await limited.userWithRoles(['operator']);
      const first = await enabledWebhook(limited, endpoint, { key: user.key, name: 'First' });
      const second = await enabledWebhook(limited, endpoint, { key: user.key, name: 'Second' });
      await createAlert(limited, onHook(limitedOrg, first.id), user.key);
      await createAlert(limited, onHook(limitedOrg, second.id), user.key);
      for (const hook of [first, second]) {
        const res = await expectNoAlertWritten(limited, () =>
          limited.request('POST', '/api/v1/mysubscriptions', {
            key: user.key,
            body: onHook(limitedOrg, hook.id),
          }),
        );
        expectError(res, 422, 'UNPROCESSABLE_ENTITY');
        expect(res.body.message).toContain('2');
      }
      await createAlert(limited, nodeAlert(limitedOrg, { name: 'E-mail is not limited' }), user.key);

      const someoneElse = await limited.userWithRoles(['operator']);
      const theirs = await enabledWebhook(limited, endpoint, { key: someoneElse.key });
      await createAlert(limited, onHook(limitedOrg, theirs.id), someoneElse.key);
      await createAlert(limited, onHook(limitedOrg, theirs.id), someoneElse.key);
    });

    it('lets webhook alerts be edited and moved between webhooks at the limit, but refuses moving an e-mail alert onto one', async () => {
      const user = await limited.userWithRoles(['operator']);
      const first = await enabledWebhook(limited, endpoint, { key: user.key, name: 'First' });
      const second = await enabledWebhook(limited, endpoint, { key: user.key, name: 'Second' });
      const a = await createAlert(limited, onHook(limitedOrg, first.id), user.key);
      await createAlert(limited, onHook(limitedOrg, first.id), user.key);
      const mail = await createAlert(limited, nodeAlert(limitedOrg), user.key);

      const rename = await limited.request('PUT', `/api/v1/mysubscriptions/${a.id}`, {
        key: user.key,
        body: { name: 'Renamed at the limit' },
      });
      expect(rename.status, rename.text).toBe(200);
      const same = await limited.request('PUT', `/api/v1/mysubscriptions/${a.id}`, {
        key: user.key,
        body: { channel_id: first.id },
      });
      expect(same.status, same.text).toBe(200);
      const move = await limited.request('PUT', `/api/v1/mysubscriptions/${a.id}`, {
        key: user.key,
        body: { channel_type: 'webhook', channel_id: second.id },
      });
      expect(move.status, move.text).toBe(200);
      expect(move.body.channel).toEqual({ id: second.id, name: 'Second' });

      const settings = await limited.request('PUT', `/api/v1/mysubscriptions/${a.id}`, {
        key: user.key,
        body: { settings: { alert_me: 'UNREACHABLE' }, channel_type: 'webhook' },
      });
      expect(settings.status, settings.text).toBe(200);
      expect(settings.body.channel).toEqual({ id: second.id, name: 'Second' });

      for (const body of [{ channel_type: 'webhook', channel_id: first.id }, { channel_id: second.id }]) {
        const promote = await expectNoAlertWritten(limited, () =>
          limited.request('PUT', `/api/v1/mysubscriptions/${mail.id}`, { key: user.key, body }),
        );
        expectError(promote, 422, 'UNPROCESSABLE_ENTITY');
        expect(promote.body.message).toContain('2');
      }

      expect(
        (await limited.request('DELETE', `/api/v1/mysubscriptions/${a.id}`, { key: user.key })).status,
      ).toBe(200);
      await createAlert(limited, onHook(limitedOrg, first.id, 'Freed slot'), user.key);
    });

    it('frees the slots of alerts removed with their webhook', async () => {
      const user = await limited.userWithRoles(['operator']);
      const hook = await enabledWebhook(limited, endpoint, { key: user.key });
      await createAlert(limited, onHook(limitedOrg, hook.id), user.key);
      await createAlert(limited, onHook(limitedOrg, hook.id), user.key);
      const removed = await limited.request('DELETE', `/api/v1/user/webhook/${hook.id}?force=true`, {
        key: user.key,
      });
      expect(removed.body.removed_alert_ids).toHaveLength(2);
      const next = await enabledWebhook(limited, endpoint, { key: user.key, name: 'Next' });
      await createAlert(limited, onHook(limitedOrg, next.id), user.key);
    });

    it('holds under concurrent creates: exactly the free slots are taken', async () => {
      const user = await limited.userWithRoles(['operator']);
      const hook = await enabledWebhook(limited, endpoint, { key: user.key });
      const answers = await Promise.all(
        [1, 2, 3, 4, 5].map((n) =>
          limited.request('POST', '/api/v1/mysubscriptions/', {
            key: user.key,
            body: onHook(limitedOrg, hook.id, `Racer ${n}`),
          }),
        ),
      );
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).toEqual([201, 201, 422, 422, 422]);
      expect(await subscriptionCount(limited, hook.id, user.key)).toBe(2);
    });
  });
});
