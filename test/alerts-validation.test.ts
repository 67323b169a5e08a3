import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countAlerts,
  createAlert,
  DEFAULT_GROUPING,
  expectNoAlertWritten,
  nodeAlert,
  whoAmI,
} from './support/alerts.js';
import { expectError } from './support/error-shape.js';
import { startTestApp, type RequestOptions, type TestApp } from './support/harness.js';

let t: TestApp;
let org: string;
let existing: { id: string };

beforeAll(async () => {
  t = await startTestApp();
  org = (await whoAmI(t)).orgId;
  existing = await createAlert(t, nodeAlert(org, { name: 'Existing' }));
});
afterAll(async () => {
  await t.close();
});

/** Tables are built before the app starts; ORG stands for the caller's organization until then. */
const ORG = '<org>';
function withOrg<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replaceAll(JSON.stringify(ORG), JSON.stringify(org))) as T;
}

describe('settings rules per type (docs/rules/alerts-and-fleet.md#settings)', () => {
  const accepted: [string, Record<string, unknown>, Record<string, string>, string][] = [
    [
      'NODE_STATE_CHANGE',
      { org_id: ORG, alert_me: 'ALIVE,UNREACHABLE', duration: 5 },
      { alert_me: 'ALIVE,UNREACHABLE', duration: '5', include_child: 'true' },
      'Node state change',
    ],
    [
      'NODE_STATE_CHANGE',
      { org_id: ORG, alert_me: ' UNREACHABLE , ALIVE,ALIVE' },
      { alert_me: 'ALIVE,UNREACHABLE', duration: '0', include_child: 'true' },
      'Node state change',
    ],
    [
      'TUNNEL_STATE_CHANGE',
      { org_id: ORG, alert_me: 'TERMINATED', duration: 0, include_child: true },
      {
        alert_me: 'TERMINATED',
        duration: '0',
        include_child: 'true',
        suppress_when_node_unreachable: 'true',
      },
      'Tunnel state change',
    ],
    [
      'TUNNEL_STATE_CHANGE',
      { org_id: ORG, alert_me: 'TERMINATED,CONNECTED', duration: 10080, include_child: 'false' },
      {
        alert_me: 'CONNECTED,TERMINATED',
        duration: '10080',
        include_child: 'false',
        suppress_when_node_unreachable: 'true',
      },
      'Tunnel state change',
    ],
    [
      'SERVICE_STATE_CHANGE',
      { org_id: ORG, alert_me: 'HEALTHY,UNHEALTHY', duration: 30, include_child: false },
      {
        alert_me: 'HEALTHY,UNHEALTHY',
        duration: '30',
        include_child: 'false',
        suppress_when_node_unreachable: 'true',
      },
      'Service state change',
    ],
    [
      'SERVICE_STATE_CHANGE',
      { org_id: ORG, alert_me: 'TERMINATED' },
      {
        alert_me: 'TERMINATED',
        duration: '0',
        include_child: 'true',
        suppress_when_node_unreachable: 'true',
      },
      'Service state change',
    ],
    [
      'NODE_STATE_CHANGE',
      { org_id: ORG },
      { alert_me: 'ALIVE,UNREACHABLE', duration: '0', include_child: 'true' },
      'Node state change',
    ],
    [
      'TUNNEL_STATE_CHANGE',
      { org_id: ORG },
      {
        alert_me: 'CONNECTED,TERMINATED',
        duration: '0',
        include_child: 'true',
        suppress_when_node_unreachable: 'true',
      },
      'Tunnel state change',
    ],
    [
      'SERVICE_STATE_CHANGE',
      { org_id: ORG, duration: 2 },
      {
        alert_me: 'HEALTHY,UNHEALTHY,TERMINATED',
        duration: '2',
        include_child: 'true',
        suppress_when_node_unreachable: 'true',
      },
      'Service state change',
    ],
    [
      'NODE_IP_CHANGE',
      { org_id: ORG, duration: 1 },
      { alert_me: 'PRIVATE_IP,PUBLIC_IP', duration: '1', include_child: 'true' },
      'Node IP change',
    ],
    [
      'NODE_IP_CHANGE',
      { org_id: ORG, alert_me: 'PUBLIC_IP' },
      { alert_me: 'PUBLIC_IP', duration: '0', include_child: 'true' },
      'Node IP change',
    ],
    ['CERT_EXPIRY', { org_id: ORG }, { alert_me: '80,100', include_child: 'true' }, 'Certificate expiry'],
    // The published client sends a duration with every type: accepted, and neither stored nor shown.
    [
      'CERT_EXPIRY',
      { org_id: ORG, alert_me: '100,80', duration: 5 },
      { alert_me: '80,100', include_child: 'true' },
      'Certificate expiry',
    ],
    [
      'HEADLESS_EXPIRY',
      { org_id: ORG, include_child: 'false', duration: 0 },
      { alert_me: '80,100', include_child: 'false' },
      'Headless expiry',
    ],
    [
      'HEADLESS_EXPIRY',
      { org_id: ORG, alert_me: '80' },
      { alert_me: '80', include_child: 'true' },
      'Headless expiry',
    ],
    [
      'NODE_UPGRADE',
      { org_id: ORG, include_child: 'true', duration: 60 },
      { alert_me: 'ENABLED,DISABLED,SUCCESSFUL,FAILED', include_child: 'true' },
      'Node upgrade',
    ],
    [
      'NODE_UPGRADE',
      { org_id: ORG, alert_me: 'FAILED,SUCCESSFUL' },
      { alert_me: 'SUCCESSFUL,FAILED', include_child: 'true' },
      'Node upgrade',
    ],
  ];

  it.each(accepted)('accepts %s with %j', async (type, settings, shown, displayName) => {
    const alert = await createAlert(t, { name: `A ${type}`, type, settings: withOrg(settings) });
    expect(alert.type).toBe(type);
    expect(alert.settings).toStrictEqual({ org_id: org, ...shown, ...DEFAULT_GROUPING.email });
    expect(alert.display_type).toBe(displayName);
    expect(alert.metadata).toStrictEqual({ labels: { '_service.alert.name': displayName } });
    const read = await t.request('GET', `/api/v1/mysubscriptions/${alert.id}`);
    expect(read.body.settings).toStrictEqual(alert.settings);
  });

  const refused: [string, Record<string, unknown>, string][] = [
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'CONNECTED' }, 'settings.alert_me'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: null }, 'settings.alert_me'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE,DOWN' }, 'settings.alert_me'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'alive' }, 'settings.alert_me'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: '' }, 'settings.alert_me'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: ' , ' }, 'settings.alert_me'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE,,UNREACHABLE' }, 'settings.alert_me'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: ['ALIVE'] }, 'settings.alert_me'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE', duration: -1 }, 'settings.duration'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE', duration: 10081 }, 'settings.duration'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE', duration: 1.5 }, 'settings.duration'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE', duration: '5' }, 'settings.duration'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE', duration: null }, 'settings.duration'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE', include_child: 'yes' }, 'settings.include_child'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE', include_child: 1 }, 'settings.include_child'],
    ['NODE_STATE_CHANGE', { alert_me: 'ALIVE' }, 'settings.org_id'],
    ['NODE_STATE_CHANGE', { org_id: '', alert_me: 'ALIVE' }, 'settings.org_id'],
    ['NODE_STATE_CHANGE', { org_id: 42, alert_me: 'ALIVE' }, 'settings.org_id'],
    ['NODE_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE', threshold: 3 }, 'settings.threshold'],
    ['TUNNEL_STATE_CHANGE', { org_id: ORG, alert_me: 'DISCONNECTED' }, 'settings.alert_me'],
    ['TUNNEL_STATE_CHANGE', { org_id: ORG, alert_me: 'ALIVE' }, 'settings.alert_me'],
    ['SERVICE_STATE_CHANGE', { org_id: ORG, alert_me: 'DISCONNECTED' }, 'settings.alert_me'],
    ['SERVICE_STATE_CHANGE', { org_id: ORG, alert_me: 'CONNECTED' }, 'settings.alert_me'],
    ['NODE_IP_CHANGE', { org_id: ORG, alert_me: 'ALIVE' }, 'settings.alert_me'],
    ['NODE_IP_CHANGE', { org_id: ORG, alert_me: 'INTERNAL_IP' }, 'settings.alert_me'],
    ['NODE_IP_CHANGE', { org_id: ORG, duration: 10081 }, 'settings.duration'],
    ['CERT_EXPIRY', { org_id: ORG, alert_me: 'ALIVE' }, 'settings.alert_me'],
    ['CERT_EXPIRY', { org_id: ORG, alert_me: '90' }, 'settings.alert_me'],
    ['CERT_EXPIRY', { org_id: ORG, duration: -1 }, 'settings.duration'],
    ['HEADLESS_EXPIRY', { org_id: ORG, alert_me: 'UNREACHABLE' }, 'settings.alert_me'],
    ['HEADLESS_EXPIRY', { org_id: ORG, duration: '5' }, 'settings.duration'],
    ['NODE_UPGRADE', { org_id: ORG, alert_me: 'UNHEALTHY' }, 'settings.alert_me'],
    ['NODE_UPGRADE', { org_id: ORG, alert_me: 'enabled' }, 'settings.alert_me'],
  ];

  it.each(refused)('refuses %s with %j (400, nothing written)', async (type, settings, field) => {
    const res = await expectNoAlertWritten(t, () =>
      t.request('POST', '/api/v1/mysubscriptions/', {
        body: { name: 'Refused', type, settings: withOrg(settings) },
      }),
    );
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details.map((detail: any) => detail.field)).toContain(field);
  });

  it.each(['DISK_FULL', 'node_state_change', '', 7])('refuses the type %j', async (type) => {
    const res = await expectNoAlertWritten(t, () =>
      t.request('POST', '/api/v1/mysubscriptions/', { body: { ...nodeAlert(org), type } }),
    );
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details.map((detail: any) => detail.field)).toContain('type');
  });
});

describe('settings rules per type on edit, applied to the stored settings merged with the edit', () => {
  const accepted: [string, Record<string, unknown>, Record<string, unknown>, Record<string, string>][] = [
    [
      'CERT_EXPIRY',
      { org_id: ORG },
      { include_child: false },
      { alert_me: '80,100', include_child: 'false' },
    ],
    ['CERT_EXPIRY', { org_id: ORG }, { duration: 5 }, { alert_me: '80,100', include_child: 'true' }],
    [
      'HEADLESS_EXPIRY',
      { org_id: ORG, alert_me: '80' },
      { alert_me: '100' },
      { alert_me: '100', include_child: 'true' },
    ],
    [
      'NODE_IP_CHANGE',
      { org_id: ORG, duration: 3 },
      { include_child: 'false' },
      { alert_me: 'PRIVATE_IP,PUBLIC_IP', duration: '3', include_child: 'false' },
    ],
    [
      'NODE_IP_CHANGE',
      { org_id: ORG },
      { duration: 10 },
      { alert_me: 'PRIVATE_IP,PUBLIC_IP', duration: '10', include_child: 'true' },
    ],
    [
      'TUNNEL_STATE_CHANGE',
      { org_id: ORG, alert_me: 'CONNECTED', duration: 7 },
      { alert_me: 'TERMINATED, CONNECTED' },
      {
        alert_me: 'CONNECTED,TERMINATED',
        duration: '7',
        include_child: 'true',
        suppress_when_node_unreachable: 'true',
      },
    ],
    [
      'SERVICE_STATE_CHANGE',
      { org_id: ORG, alert_me: 'HEALTHY', include_child: false },
      { duration: 60 },
      { alert_me: 'HEALTHY', duration: '60', include_child: 'false', suppress_when_node_unreachable: 'true' },
    ],
  ];

  it.each(accepted)('accepts %s stored as %j, edited with %j', async (type, stored, edit, shown) => {
    const alert = await createAlert(t, { name: `Edit ${type}`, type, settings: withOrg(stored) });
    const res = await t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, { body: { settings: edit } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.settings).toStrictEqual({ org_id: org, ...shown, ...DEFAULT_GROUPING.email });
  });

  const refused: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
    ['CERT_EXPIRY', { org_id: ORG }, { alert_me: 'ALIVE' }, 'settings.alert_me'],
    ['NODE_IP_CHANGE', { org_id: ORG }, { alert_me: 'ALIVE' }, 'settings.alert_me'],
    [
      'TUNNEL_STATE_CHANGE',
      { org_id: ORG, alert_me: 'CONNECTED' },
      { alert_me: 'ALIVE' },
      'settings.alert_me',
    ],
    ['SERVICE_STATE_CHANGE', { org_id: ORG, alert_me: 'HEALTHY' }, { alert_me: 'UP' }, 'settings.alert_me'],
    ['HEADLESS_EXPIRY', { org_id: ORG }, { alert_me: '50' }, 'settings.alert_me'],
  ];

  it.each(refused)(
    'refuses %s stored as %j, edited with %j (400, nothing written)',
    async (type, stored, edit, field) => {
      const alert = await createAlert(t, { name: `Edit ${type}`, type, settings: withOrg(stored) });
      const res = await expectNoAlertWritten(t, () =>
        t.request('PUT', `/api/v1/mysubscriptions/${alert.id}`, { body: { settings: edit } }),
      );
      expectError(res, 400, 'BAD_REQUEST');
      expect(res.body.details.map((detail: any) => detail.field)).toEqual([field]);
    },
  );
});

type BadInput = [string, RequestOptions, number, string];

const json = (payload: string): RequestOptions => ({
  payload,
  headers: { 'content-type': 'application/json' },
});
const big = (n: number) => 'x'.repeat(n);

/** Bodies that are wrong for POST and PUT alike. */
function sharedBadBodies(base: object): BadInput[] {
  return [
    [
      'a text/plain body',
      { payload: 'name=x', headers: { 'content-type': 'text/plain' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a form body',
      { payload: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['a body without content type', { payload: '{"name":"x"}' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['malformed JSON', json('{"name":'), 400, 'BAD_REQUEST'],
    ['an empty JSON body', json(''), 400, 'BAD_REQUEST'],
    ['JSON null', json('null'), 400, 'BAD_REQUEST'],
    ['a JSON array', json('[{"name":"x"}]'), 400, 'BAD_REQUEST'],
    ['a JSON string', json('"name"'), 400, 'BAD_REQUEST'],
    ['a JSON number', json('42'), 400, 'BAD_REQUEST'],
    ['a prototype-polluting body', json('{"name":"x","__proto__":{"admin":true}}'), 400, 'BAD_REQUEST'],
    ['a body over 64 KiB', { body: { ...base, name: big(70_000) } }, 413, 'PAYLOAD_TOO_LARGE'],
    ['a numeric name', { body: { ...base, name: 12 } }, 400, 'BAD_REQUEST'],
    ['a null name', { body: { ...base, name: null } }, 400, 'BAD_REQUEST'],
    ['an empty name', { body: { ...base, name: '' } }, 400, 'BAD_REQUEST'],
    ['a name of 129 characters', { body: { ...base, name: big(129) } }, 400, 'BAD_REQUEST'],
    ['a name of 60,000 characters', { body: { ...base, name: big(60_000) } }, 400, 'BAD_REQUEST'],
    ['a name with NUL', { body: { ...base, name: 'a\u0000b' } }, 400, 'BAD_REQUEST'],
    ['settings as a string', { body: { ...base, settings: 'org' } }, 400, 'BAD_REQUEST'],
    ['settings as an array', { body: { ...base, settings: [] } }, 400, 'BAD_REQUEST'],
    ['settings null', { body: { ...base, settings: null } }, 400, 'BAD_REQUEST'],
    [
      'a huge org_id',
      { body: { ...base, settings: { org_id: big(5000), alert_me: 'ALIVE' } } },
      400,
      'BAD_REQUEST',
    ],
    [
      'an org_id with NUL',
      { body: { ...base, settings: { org_id: '\u0000', alert_me: 'ALIVE' } } },
      400,
      'BAD_REQUEST',
    ],
    [
      'a huge alert_me',
      { body: { ...base, settings: { org_id: ORG, alert_me: big(300) } } },
      400,
      'BAD_REQUEST',
    ],
    [
      'an alert_me with NUL',
      { body: { ...base, settings: { org_id: ORG, alert_me: 'ALIVE\u0000' } } },
      400,
      'BAD_REQUEST',
    ],
    [
      'a huge duration',
      { body: { ...base, settings: { org_id: ORG, alert_me: 'ALIVE', duration: 1e300 } } },
      400,
      'BAD_REQUEST',
    ],
    ['channel_type as a number', { body: { ...base, channel_type: 1 } }, 400, 'BAD_REQUEST'],
    [
      'a channel_id of 65 characters',
      { body: { ...base, channel_type: 'webhook', channel_id: big(65) } },
      400,
      'BAD_REQUEST',
    ],
    [
      'a channel_id with NUL',
      { body: { ...base, channel_type: 'webhook', channel_id: 'a\u0000' } },
      400,
      'BAD_REQUEST',
    ],
    [
      'a numeric channel_id',
      { body: { ...base, channel_type: 'webhook', channel_id: 5 } },
      400,
      'BAD_REQUEST',
    ],
    ['an extra field', { body: { ...base, colour: 'red' } }, 400, 'BAD_REQUEST'],
    ['an id field', { body: { ...base, id: '01900000-0000-7000-8000-000000000000' } }, 400, 'BAD_REQUEST'],
    ['a created_by field', { body: { ...base, created_by: { id: 'x', name: 'y' } } }, 400, 'BAD_REQUEST'],
  ];
}

/** Puts the expected answer next to the label, where the test title shows it. */
function titled(rows: BadInput[]): [string, number, string, RequestOptions][] {
  return rows.map(([label, options, status, errorCode]) => [label, status, errorCode, options]);
}

function expectRefused(res: Awaited<ReturnType<TestApp['request']>>, status: number, errorCode: string) {
  expect(res.status, res.text).toBeLessThan(500);
  expectError(res, status, errorCode);
}

describe('bad input on POST /api/v1/mysubscriptions/', () => {
  const rows: BadInput[] = [
    ...sharedBadBodies(nodeAlert(ORG)),
    ['a missing name', { body: { type: 'CERT_EXPIRY', settings: { org_id: ORG } } }, 400, 'BAD_REQUEST'],
    ['a missing type', { body: { name: 'x', settings: { org_id: ORG } } }, 400, 'BAD_REQUEST'],
    ['missing settings', { body: { name: 'x', type: 'CERT_EXPIRY' } }, 400, 'BAD_REQUEST'],
    [
      'a type object',
      { body: { name: 'x', type: { NODE: 1 }, settings: { org_id: ORG } } },
      400,
      'BAD_REQUEST',
    ],
  ];

  it.each(titled(rows))('%s → %i %s', async (_label, status, errorCode, options) => {
    const res = await expectNoAlertWritten(t, () =>
      t.request('POST', '/api/v1/mysubscriptions/', withOrg(options)),
    );
    expectRefused(res, status, errorCode);
  });
});

describe('bad input on PUT /api/v1/mysubscriptions/{id}', () => {
  const rows: BadInput[] = [
    ...sharedBadBodies({ name: 'Edited', settings: { org_id: ORG, alert_me: 'ALIVE' } }),
    ['an empty object', { body: {} }, 400, 'BAD_REQUEST'],
    ['an empty settings object alone', { body: { settings: {} } }, 400, 'BAD_REQUEST'],
    ['another type', { body: { type: 'CERT_EXPIRY' } }, 400, 'BAD_REQUEST'],
    ['another type with a name', { body: { name: 'x', type: 'CERT_EXPIRY' } }, 400, 'BAD_REQUEST'],
    ["the alert's own type alone", { body: { type: 'NODE_STATE_CHANGE' } }, 400, 'BAD_REQUEST'],
    ['an unknown type', { body: { name: 'x', type: 'DISK_FULL' } }, 400, 'BAD_REQUEST'],
    ['a lower-case type', { body: { name: 'x', type: 'node_state_change' } }, 400, 'BAD_REQUEST'],
    ['an empty org_id', { body: { settings: { org_id: '' } } }, 400, 'BAD_REQUEST'],
    ['a null org_id', { body: { settings: { org_id: null } } }, 400, 'BAD_REQUEST'],
    ['settings with an unknown field', { body: { settings: { threshold: 3 } } }, 400, 'BAD_REQUEST'],
  ];

  it.each(titled(rows))('%s → %i %s', async (_label, status, errorCode, options) => {
    const res = await expectNoAlertWritten(t, () =>
      t.request('PUT', `/api/v1/mysubscriptions/${existing.id}`, withOrg(options)),
    );
    expectRefused(res, status, errorCode);
  });
});

describe('bad ids on GET, PUT and DELETE /api/v1/mysubscriptions/{id}', () => {
  const ids: [string, string, number, string][] = [
    ['an id that is not a UUID', 'not-an-alert', 404, 'NOT_FOUND'],
    ['an id of 65 characters', big(65), 400, 'BAD_REQUEST'],
    ['an id with NUL', 'a%00b', 400, 'BAD_REQUEST'],
    ['an id with an emoji', '%F0%9F%98%80', 404, 'NOT_FOUND'],
    ['an id with a quote', "x'%20or%20'1'='1", 404, 'NOT_FOUND'],
  ];

  it.each(ids)('%s', async (_label, id, status, errorCode) => {
    const before = await countAlerts(t);
    expectRefused(await t.request('GET', `/api/v1/mysubscriptions/${id}`), status, errorCode);
    expectRefused(
      await t.request('PUT', `/api/v1/mysubscriptions/${id}`, { body: { name: 'x' } }),
      status,
      errorCode,
    );
    expectRefused(await t.request('DELETE', `/api/v1/mysubscriptions/${id}`), status, errorCode);
    expect(await countAlerts(t)).toBe(before);
  });

  it('accepts GET and DELETE with the JSON content type and no body', async () => {
    const alert = await createAlert(t, nodeAlert(org, { name: 'Content type' }));
    const headers = { 'content-type': 'application/json' };
    expect((await t.request('GET', `/api/v1/mysubscriptions/${alert.id}`, { headers })).status).toBe(200);
    expect((await t.request('GET', '/api/v2/mysubscriptions', { headers })).status).toBe(200);
    expect((await t.request('DELETE', `/api/v1/mysubscriptions/${alert.id}`, { headers })).status).toBe(200);
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const res = await t.request('PATCH', `/api/v1/mysubscriptions/${existing.id}`, { body: { name: 'x' } });
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(String(res.headers.allow)).toContain('PUT');
  });
});
