import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlert, expectNoAlertWritten, nodeAlert, whoAmI } from './support/alerts.js';
import { expectError } from './support/error-shape.js';
import { startTestApp, type TestApp } from './support/harness.js';
import {
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// An alert's grouping settings (docs/rules/alerts-and-fleet.md#grouping): stored, answered with the
// channel's defaults filled in, merged by an edit, and refused out of range with nothing written.
let t: TestApp;
let endpoint: ReceiverWithSecret;
let orgId: string;
let hook: { id: string };

const grouping = (body: { settings: Record<string, unknown> }) => {
  const { group_by, group_wait, group_interval, repeat_interval } = body.settings;
  return { group_by, group_wait, group_interval, repeat_interval };
};

const put = (id: string, body: Record<string, unknown>) =>
  t.request('PUT', `/api/v1/mysubscriptions/${id}`, { body });

beforeAll(async () => {
  t = await startTestApp({ ...receiverAccess() });
  endpoint = await startCorrectReceiver();
  orgId = (await whoAmI(t)).orgId;
  hook = await enabledWebhook(t, endpoint, { name: 'Grouping receiver' });
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

describe('grouping defaults', () => {
  it('groups by organization on e-mail and not at all on a webhook, with the same times', async () => {
    const byMail = await createAlert(t, nodeAlert(orgId));
    expect(grouping(byMail)).toEqual({
      group_by: 'organization',
      group_wait: '10',
      group_interval: '300',
      repeat_interval: '14400',
    });
    const byWebhook = await createAlert(
      t,
      nodeAlert(orgId, { channel_type: 'webhook', channel_id: hook.id }),
    );
    expect(grouping(byWebhook)).toEqual({
      group_by: 'none',
      group_wait: '10',
      group_interval: '300',
      repeat_interval: '14400',
    });
  });

  it("follows the channel while unset: an alert moved from a webhook to e-mail takes e-mail's default", async () => {
    const alert = await createAlert(t, nodeAlert(orgId, { channel_type: 'webhook', channel_id: hook.id }));
    const moved = await put(alert.id, { channel_type: 'email' });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.settings.group_by).toBe('organization');
  });
});

describe('grouping chosen', () => {
  it('stores and answers each setting, in whole seconds or their decimal string, at the ends of its range', async () => {
    const alert = await createAlert(
      t,
      nodeAlert(orgId, {
        settings: {
          org_id: orgId,
          group_by: 'node',
          group_wait: 0,
          group_interval: '86400',
          repeat_interval: 604_800,
        },
      }),
    );
    const expected = {
      group_by: 'node',
      group_wait: '0',
      group_interval: '86400',
      repeat_interval: '604800',
    };
    expect(grouping(alert)).toEqual(expected);
    const read = await t.request('GET', `/api/v1/mysubscriptions/${alert.id}`);
    expect(grouping(read.body)).toEqual(expected);
    const row = await t.ctx.db
      .selectFrom('alerts')
      .select(['group_by', 'group_wait_s', 'group_interval_s', 'repeat_interval_s'])
      .where('id', '=', alert.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      group_by: 'node',
      group_wait_s: 0,
      group_interval_s: 86_400,
      repeat_interval_s: 604_800,
    });
  });

  it('keeps what an edit leaves out, takes what it gives, and puts a setting given as null back to its default', async () => {
    const alert = await createAlert(
      t,
      nodeAlert(orgId, { settings: { org_id: orgId, group_by: 'none', group_wait: 30 } }),
    );
    const edited = await put(alert.id, { settings: { group_interval: 60 } });
    expect(edited.status, edited.text).toBe(200);
    expect(grouping(edited.body)).toEqual({
      group_by: 'none',
      group_wait: '30',
      group_interval: '60',
      repeat_interval: '14400',
    });
    // The answer's strings go back as they came.
    const echoed = await put(alert.id, { settings: grouping(edited.body) });
    expect(echoed.status, echoed.text).toBe(200);
    expect(grouping(echoed.body)).toEqual(grouping(edited.body));
    const reset = await put(alert.id, { settings: { group_by: null, group_wait: null } });
    expect(reset.status, reset.text).toBe(200);
    expect(grouping(reset.body)).toEqual({
      group_by: 'organization',
      group_wait: '10',
      group_interval: '60',
      repeat_interval: '14400',
    });
  });
});

describe('grouping refused', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['a wait over 10 minutes', { group_wait: 601 }, 'settings.group_wait'],
    ['a negative wait', { group_wait: -1 }, 'settings.group_wait'],
    ['an interval of 0', { group_interval: 0 }, 'settings.group_interval'],
    ['an interval over a day', { group_interval: '86401' }, 'settings.group_interval'],
    ['a repeat over a week', { repeat_interval: 604_801 }, 'settings.repeat_interval'],
    ['a fraction of a second', { group_wait: 1.5 }, 'settings.group_wait'],
    ['a string that is not a number', { repeat_interval: '4h' }, 'settings.repeat_interval'],
  ];
  for (const [what, settings, field] of cases) {
    it(`refuses ${what} with a 400 naming ${field}, on create and on edit, writing nothing`, async () => {
      const created = await expectNoAlertWritten(t, () =>
        t.request('POST', '/api/v1/mysubscriptions/', {
          body: nodeAlert(orgId, { settings: { org_id: orgId, ...settings } }),
        }),
      );
      expectError(created, 400, 'BAD_REQUEST');
      expect(JSON.stringify(created.body)).toContain(field);
      const alert = await createAlert(t, nodeAlert(orgId));
      const edited = await expectNoAlertWritten(t, () => put(alert.id, { settings }));
      expectError(edited, 400, 'BAD_REQUEST');
      expect(JSON.stringify(edited.body)).toContain(field);
    });
  }

  it('refuses a group_by it does not know, naming the field', async () => {
    const res = await expectNoAlertWritten(t, () =>
      t.request('POST', '/api/v1/mysubscriptions/', {
        body: nodeAlert(orgId, { settings: { org_id: orgId, group_by: 'site' } }),
      }),
    );
    expectError(res, 400, 'BAD_REQUEST');
    expect(JSON.stringify(res.body)).toContain('group_by');
  });
});
