import { expect } from 'vitest';
import type { TestApp, TestResponse } from './harness.js';

/** The reference's 422 body for a disabled webhook, byte for byte. */
export const DISABLED_WEBHOOK_BODY =
  '{"statusCode":422,"errorCode":"UNPROCESSABLE_ENTITY",' +
  '"message":"The webhook is disabled and cannot be associated with the alert."}';

export const ALERT_FIELDS = [
  'channel',
  'channel_type',
  'created_at',
  'created_by',
  'display_type',
  'id',
  'metadata',
  'name',
  'settings',
  'type',
];

export const CREATED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

export async function countAlerts(t: TestApp): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('alerts')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Every alert row, as stored: a refused request must leave this unchanged. */
export async function alertRows(t: TestApp): Promise<unknown[]> {
  return t.ctx.db.selectFrom('alerts').selectAll().orderBy('id').execute();
}

/** Runs a request that must be refused and checks it left the alerts table as it was. */
export async function expectNoAlertWritten(
  t: TestApp,
  send: () => Promise<TestResponse>,
): Promise<TestResponse> {
  const before = await alertRows(t);
  const res = await send();
  expect(await alertRows(t)).toEqual(before);
  return res;
}

/** The grouping an alert answers when it chose none: its channel's (docs/rules/alerts-and-fleet.md#grouping). */
export const DEFAULT_GROUPING = {
  email: { group_by: 'organization', group_wait: '10', group_interval: '300', repeat_interval: '14400' },
  webhook: { group_by: 'none', group_wait: '10', group_interval: '300', repeat_interval: '14400' },
} as const;

export interface NewAlert {
  name?: string;
  type?: string;
  settings?: Record<string, unknown>;
  channel_type?: string;
  channel_id?: string;
}

/** A valid NODE_STATE_CHANGE alert on `orgId`, e-mail channel unless overridden. */
export function nodeAlert(orgId: string, overrides: NewAlert = {}): NewAlert {
  return {
    name: 'Gateway down',
    type: 'NODE_STATE_CHANGE',
    settings: { org_id: orgId, alert_me: 'ALIVE,UNREACHABLE', duration: 5 },
    ...overrides,
  };
}

export async function createAlert(t: TestApp, body: NewAlert, key?: string): Promise<any> {
  const res = await t.request('POST', '/api/v1/mysubscriptions/', {
    body,
    ...(key === undefined ? {} : { key }),
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function getWebhook(t: TestApp, id: string, key?: string): Promise<TestResponse> {
  return t.request('GET', `/api/v1/webhook/${id}`, key === undefined ? {} : { key });
}

/** `{id, name}` of the caller, as `created_by` must show it. */
export async function whoAmI(t: TestApp, key?: string): Promise<{ id: string; name: string; orgId: string }> {
  const me = await t.request('GET', '/api/v1/user/me', key === undefined ? {} : { key });
  expect(me.status, me.text).toBe(200);
  return { id: me.body.id, name: me.body.name, orgId: me.body.org_id };
}
