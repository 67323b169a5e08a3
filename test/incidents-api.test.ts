import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/error-shape.js';
import {
  groupedAlert,
  nodesIn,
  outage,
  report,
  startEngineApp,
  subOrg,
  type EngineApp,
} from './support/incident-engine.js';

// The incidents API (docs/rules/alerts-and-fleet.md#incidents-api), on both databases: the list (firing
// first, every filter, scope=org), one incident with its messages and deliveries, and its members paged.
let engine: EngineApp;
const S = 1_000;
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdefPDKY';

let alpha: string;
let beta: string;
let operator: { id: string; key: string };
let alphaOperator: { id: string; key: string };
let reader: { key: string };
let betaTokens: string[];
let alertX: string;
let alertY: string;
let pagerDuty: string;
/** The admin's incidents: Alpha's, Beta's first (resolved) and Beta's second (firing). */
let xAlpha: string;
let xBeta1: string;
let xBeta2: string;

const get = (path: string, key?: string) => engine.t.request('GET', path, key === undefined ? {} : { key });

async function list(query = '', key?: string) {
  const res = await get(`/api/v2/incident${query}`, key);
  expect(res.status, res.text).toBe(200);
  return res.body as { total_count: number; results: any[] };
}

const ids = (page: { results: { id: string }[] }) => page.results.map((item) => item.id);

async function incidentOf(alertId: string, orgId: string, status: 'firing' | 'resolved') {
  const row = await engine.t.ctx.db
    .selectFrom('incidents')
    .select('id')
    .where('alert_id', '=', alertId)
    .where('org_id', '=', orgId)
    .where('status', '=', status)
    .executeTakeFirstOrThrow();
  return row.id;
}

beforeAll(async () => {
  engine = await startEngineApp();
  const { t } = engine;
  alpha = await subOrg(engine, 'Alpha');
  beta = await subOrg(engine, 'Beta');
  operator = await t.userWithRoles(['operator']);
  alphaOperator = await t.userWithRoles(['operator'], alpha);
  reader = await t.userWithRoles(['read_only']);
  await nodesIn(engine, alpha, 'alpha', 3);
  betaTokens = (await nodesIn(engine, beta, 'beta', 2)).map((node) => node.token);

  // The admin's e-mail alert groups by organization; the operator's PagerDuty alert, on Alpha, by node.
  alertX = await groupedAlert(engine, { group_wait: 10, group_interval: 300 });
  const channel = await t.request('POST', '/api/v1/channel', {
    key: operator.key,
    body: { name: 'Pager', type: 'pagerduty', routing_key: ROUTING_KEY },
  });
  expect(channel.status, channel.text).toBe(201);
  pagerDuty = channel.body.id as string;
  const created = await t.request('POST', '/api/v1/mysubscriptions', {
    key: operator.key,
    body: {
      name: 'Alpha nodes',
      type: 'NODE_STATE_CHANGE',
      channel_type: 'pagerduty',
      channel_id: pagerDuty,
      settings: { org_id: alpha, group_by: 'node', group_wait: 10 },
    },
  });
  expect(created.status, created.text).toBe(201);
  alertY = created.body.id as string;

  // Both organizations go down; Beta recovers (its incident resolves), then goes down again.
  expect(await outage(engine)).toBe(5);
  engine.at.now += 10 * S;
  await engine.flushDue();
  for (const token of betaTokens) await report(engine, token);
  engine.at.now += 10 * S;
  await engine.flushDue();
  xBeta1 = await incidentOf(alertX, beta, 'resolved');
  engine.at.now += 60 * S;
  expect(await outage(engine)).toBe(2);
  xAlpha = await incidentOf(alertX, alpha, 'firing');
  xBeta2 = await incidentOf(alertX, beta, 'firing');
});
afterAll(async () => {
  await engine.t.close();
});

describe('GET /api/v2/incident', () => {
  it("lists the caller's incidents, the firing ones first, newest first within each status", async () => {
    const mine = await list();
    expect(mine.total_count).toBe(3);
    expect(ids(mine)).toEqual([xBeta2, xAlpha, xBeta1]);
    const [first] = mine.results;
    const me = (await get('/api/v1/user/me')).body;
    expect(first).toEqual({
      id: xBeta2,
      status: 'firing',
      alert: { id: alertX, name: 'Nodes down' },
      owner: { id: me.id, name: me.name },
      organization: { id: beta, name: 'Beta' },
      node: null,
      type: 'NODE_STATE_CHANGE',
      group_by: 'organization',
      opened_at: new Date(engine.at.now).toISOString(),
      resolved_at: null,
      last_message_at: new Date(engine.at.now).toISOString(),
      sequence: 1,
      counts: { firing: 2, flaps: 0, behind_unreachable: 0, members: 2 },
    });
    const resolved = mine.results[2];
    expect(resolved).toMatchObject({ id: xBeta1, status: 'resolved', sequence: 3, counts: { firing: 0 } });
    expect(resolved.resolved_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(mine.results[1]).toMatchObject({ id: xAlpha, sequence: 2, counts: { firing: 3, members: 3 } });
  });

  it('filters by status, alert and organization, and pages', async () => {
    expect(ids(await list('?status=firing'))).toEqual([xBeta2, xAlpha]);
    expect(ids(await list('?status=resolved'))).toEqual([xBeta1]);
    expect(ids(await list(`?alert_id=${alertX}`))).toEqual([xBeta2, xAlpha, xBeta1]);
    expect((await list(`?alert_id=${alertY}`)).total_count).toBe(0);
    expect(ids(await list(`?org_id=${alpha}`))).toEqual([xAlpha]);
    expect(ids(await list(`?org_id=${beta}&status=resolved`))).toEqual([xBeta1]);
    const second = await list('?size=1&page=1');
    expect(second).toMatchObject({ total_count: 3 });
    expect(ids(second)).toEqual([xAlpha]);
    expect(await list('?page=9')).toEqual({ total_count: 3, results: [] });
  });

  it("shows every user's with scope=org, with their owner, and narrows with own", async () => {
    const everyone = await list('?scope=org&size=100');
    expect(everyone.total_count).toBe(6);
    const statuses = everyone.results.map((item) => item.status);
    expect(statuses).toEqual([...statuses].sort((a, b) => (a === b ? 0 : a === 'firing' ? -1 : 1)));
    const firing = everyone.results.filter((item) => item.status === 'firing').map((item) => item.opened_at);
    expect(firing).toEqual([...firing].sort().reverse());
    const byNode = everyone.results.filter((item) => item.alert.id === alertY);
    expect(byNode).toHaveLength(3);
    for (const item of byNode) {
      expect(item).toMatchObject({
        owner: { id: operator.id, name: expect.stringMatching(/^User /) },
        organization: { id: alpha, name: 'Alpha' },
        group_by: 'node',
        node: { id: expect.any(String), name: expect.stringMatching(/^alpha-00\d$/) },
        counts: { firing: 1, members: 1 },
      });
    }
    expect((await list('?scope=org&own=true')).total_count).toBe(3);
    expect((await list(`?scope=org&alert_id=${alertY}`)).total_count).toBe(3);
    expect((await list(`?scope=org&org_id=${alpha}`)).total_count).toBe(4);
    expect((await list(`?scope=org&org_id=${beta}`)).total_count).toBe(2);
  });

  it("keeps another user's out of scope mine, and an operator of a sub-organization inside it", async () => {
    expect((await list('', operator.key)).results.every((item) => item.alert.id === alertY)).toBe(true);
    expect((await list('', operator.key)).total_count).toBe(3);
    expect((await list('?scope=org', operator.key)).total_count).toBe(6);
    const seen = await list('?scope=org&size=100', alphaOperator.key);
    expect(seen.total_count).toBe(4);
    expect(seen.results.every((item) => item.organization.id === alpha)).toBe(true);
    expect((await list('', alphaOperator.key)).total_count).toBe(0);
    expectError(await get(`/api/v2/incident?scope=org&org_id=${beta}`, alphaOperator.key), 404, 'NOT_FOUND');
    expectError(await get(`/api/v2/incident?org_id=${beta}`, alphaOperator.key), 404, 'NOT_FOUND');
    expectError(await get('/api/v2/incident?scope=org', reader.key), 403, 'FORBIDDEN');
  });

  it.each([
    ['status=open', 'status'],
    ['scope=all', 'scope'],
    ['org_id=', 'org_id'],
    ['alert_id=', 'alert_id'],
    [`alert_id=${'x'.repeat(65)}`, 'alert_id'],
    ['own=maybe', 'own'],
    ['size=0', 'size'],
    ['page=-1', 'page'],
    ['type=NODE_STATE_CHANGE', 'type'],
  ])('answers 400 for ?%s, naming %s', async (query, field) => {
    const res = await get(`/api/v2/incident?${query}`);
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it('answers 404 for an unknown org_id and 401 without a key', async () => {
    expectError(await get('/api/v2/incident?org_id=nope'), 404, 'NOT_FOUND');
    expectError(await engine.t.request('GET', '/api/v2/incident', { key: null }), 401, 'UNAUTHORIZED');
  });

  it('states its order in the OpenAPI description', async () => {
    const doc = (await get('/openapi.json')).body;
    expect(doc.paths['/api/v2/incident'].get.description).toMatch(/Order: firing first/);
    expect(doc.paths['/api/v1/incident/{id}'].get.responses['404']).toBeDefined();
    expect(doc.paths['/api/v2/incident/{id}/members'].get.responses['404']).toBeDefined();
  });
});

describe('GET /api/v1/incident/{id}', () => {
  it('answers the incident with its messages, oldest first, as their notifications say', async () => {
    const res = await get(`/api/v1/incident/${xBeta1}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: xBeta1, status: 'resolved', sequence: 3 });
    const rows = await engine.t.ctx.db
      .selectFrom('notifications')
      .select(['id', 'status'])
      .where('incident_id', '=', xBeta1)
      .where('incident_sequence', 'is not', null)
      .orderBy('incident_sequence')
      .execute();
    expect(res.body.messages).toEqual(
      rows.map((row, index) => ({
        notification_id: row.id,
        sequence: index + 1,
        reason: ['opened', 'updated', 'resolved'][index],
        status: row.status,
        created_at: expect.stringMatching(/Z$/),
        channel_type: 'EMAIL',
        deliveries: [],
      })),
    );
    const created = res.body.messages.map((message: { created_at: string }) => message.created_at);
    expect(created).toEqual([...created].sort());
  });

  it("lists a channel's deliveries of each message", async () => {
    const [incident] = (await list(`?scope=org&alert_id=${alertY}&size=1`)).results;
    const res = await get(`/api/v1/incident/${incident.id}`, operator.key);
    expect(res.status, res.text).toBe(200);
    expect(res.body.messages).toHaveLength(1);
    const [message] = res.body.messages;
    expect(message).toMatchObject({
      sequence: 1,
      reason: 'opened',
      status: 'pending',
      channel_type: 'PAGERDUTY',
    });
    expect(message.deliveries).toEqual([
      { id: expect.any(String), webhook_id: pagerDuty, status: 'pending', attempts: 0, delivered_at: null },
    ]);
  });

  it('reads what the scope=org list shows, and answers 404 for anything else', async () => {
    expect((await get(`/api/v1/incident/${xAlpha}`, operator.key)).status).toBe(200);
    expect((await get(`/api/v1/incident/${xAlpha}`, alphaOperator.key)).status).toBe(200);
    expectError(await get(`/api/v1/incident/${xBeta1}`, alphaOperator.key), 404, 'NOT_FOUND');
    // Read Only may read alerts but not other users' notifications: another user's incident is not found.
    expectError(await get(`/api/v1/incident/${xAlpha}`, reader.key), 404, 'NOT_FOUND');
    expectError(await get('/api/v1/incident/01900000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await get(`/api/v1/incident/${'x'.repeat(65)}`), 400, 'BAD_REQUEST');
  });
});

describe('GET /api/v2/incident/{id}/members', () => {
  it("lists an incident's members with their notification's facts", async () => {
    const page = await get(`/api/v2/incident/${xAlpha}/members`);
    expect(page.status, page.text).toBe(200);
    expect(page.body.total_count).toBe(3);
    expect(page.body.results[0]).toEqual({
      key: expect.any(String),
      resource: { kind: 'node', id: expect.any(String), name: expect.stringMatching(/^alpha-00\d$/) },
      node: { id: expect.any(String), name: expect.stringMatching(/^alpha-00\d$/) },
      organization: { id: alpha, name: 'Alpha' },
      condition: 'UNREACHABLE',
      previous_state: 'ALIVE',
      current_state: 'UNREACHABLE',
      firing: true,
      since: expect.stringMatching(/Z$/),
      change: null,
      flaps: 0,
    });
    // A resolved incident's members are its recovered ones, their recovery told (change null).
    const recovered = (await get(`/api/v2/incident/${xBeta1}/members`)).body;
    expect(recovered.total_count).toBe(2);
    for (const member of recovered.results)
      expect(member).toMatchObject({
        organization: { id: beta, name: 'Beta' },
        condition: 'ALIVE',
        previous_state: 'UNREACHABLE',
        current_state: 'ALIVE',
        firing: false,
        change: null,
      });
  });

  it('follows the read rule and answers errors in the contract shape', async () => {
    expect((await get(`/api/v2/incident/${xAlpha}/members`, alphaOperator.key)).status).toBe(200);
    expectError(await get(`/api/v2/incident/${xAlpha}/members`, reader.key), 404, 'NOT_FOUND');
    expectError(await get(`/api/v2/incident/${xBeta2}/members`, alphaOperator.key), 404, 'NOT_FOUND');
    expectError(await get('/api/v2/incident/unknown/members'), 404, 'NOT_FOUND');
    expectError(await get(`/api/v2/incident/${xAlpha}/members?size=101`), 400, 'BAD_REQUEST');
    expectError(await get(`/api/v2/incident/${xAlpha}/members?status=firing`), 400, 'BAD_REQUEST');
  });

  it('pages every member of a 120-node outage, as the update message links them', async () => {
    const storm = await subOrg(engine, 'Storm');
    const nodes = await nodesIn(engine, storm, 'storm', 120);
    engine.at.now += 60 * S;
    expect(await outage(engine)).toBe(120);
    const incident = await incidentOf(alertX, storm, 'firing');

    // Before the update, the changed ones (new) come first, the one the opening message told last.
    const before = [
      ...(await get(`/api/v2/incident/${incident}/members?size=100`)).body.results,
      ...(await get(`/api/v2/incident/${incident}/members?size=100&page=1`)).body.results,
    ];
    expect(before).toHaveLength(120);
    const rank = (change: string | null) => (change === 'new' ? 0 : change === 'recovered' ? 1 : 2);
    const ranks = before.map((member) => rank(member.change));
    expect(ranks).toEqual([...ranks].sort());
    expect(ranks.filter((r) => r === 0).length).toBeGreaterThanOrEqual(119);

    engine.at.now += 10 * S;
    await engine.flushDue();
    const messages = await engine.messages(incident);
    const update = messages.at(-1)!;
    expect(update.incident).toMatchObject({ sequence: 2, reason: 'updated', members_omitted: 20 });
    expect(update.members).toHaveLength(100);
    const url = new URL(update.incident.members_url);
    expect(url.origin).toBe('http://edgewatch.test');
    expect(url.pathname).toBe(`/api/v2/incident/${incident}/members`);

    const keys: string[] = [];
    for (const pageNo of [0, 1, 2]) {
      const res = await get(`${url.pathname}?size=50&page=${pageNo}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.total_count).toBe(120);
      expect(res.body.results).toHaveLength(pageNo < 2 ? 50 : 20);
      keys.push(...res.body.results.map((member: { key: string }) => member.key));
    }
    expect(new Set(keys)).toEqual(new Set(nodes.map((node) => node.id)));
    expect((await get(`${url.pathname}?size=50&page=3`)).body).toEqual({ total_count: 120, results: [] });

    const detail = (await get(`/api/v1/incident/${incident}`)).body;
    expect(detail).toMatchObject({ sequence: 2, counts: { firing: 120, members: 120 } });
    expect(detail.messages.map((m: { reason: string }) => m.reason)).toEqual(['opened', 'updated']);
  });
});

describe('grouped notifications', () => {
  it('name their incident in GET /api/v2/notification, which lists no message', async () => {
    const page = await list(`?alert_id=${alertX}`);
    const incidents = new Set(ids(page));
    const all = await engine.t.request(
      'GET',
      `/api/v2/notification?alert_id=${alertX}&org_id=${beta}&size=100`,
    );
    expect(all.status, all.text).toBe(200);
    const grouped = all.body.results.filter((n: { status: string }) => n.status === 'grouped');
    expect(grouped.length).toBeGreaterThan(0);
    for (const notification of grouped) expect(incidents.has(notification.incident_id)).toBe(true);
    const beta1 = all.body.results.filter((n: { incident_id: string }) => n.incident_id === xBeta1);
    // Beta's two nodes went down and recovered: four notifications joined its first incident.
    expect(beta1).toHaveLength(4);
    const messageIds = (await get(`/api/v1/incident/${xBeta1}`)).body.messages.map(
      (m: { notification_id: string }) => m.notification_id,
    );
    const listed = new Set(all.body.results.map((n: { id: string }) => n.id));
    for (const id of messageIds) expect(listed.has(id)).toBe(false);
  });
});

describe('names', () => {
  it('are the current ones, and a node that is gone keeps the name its notifications gave it', async () => {
    const byNode = (await list(`?scope=org&alert_id=${alertY}&size=100`)).results;
    const [first, second] = byNode;
    const renamed = await engine.t.request('PUT', `/api/v1/node/${first.node.id}`, {
      body: { name: 'renamed' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const removed = await engine.t.request('DELETE', `/api/v1/node/${second.node.id}`);
    expect(removed.status, removed.text).toBe(200);
    expect((await get(`/api/v1/node/${second.node.id}`)).status).toBe(404);
    const after = new Map(
      (await list(`?scope=org&alert_id=${alertY}&size=100`)).results.map((item) => [item.id, item]),
    );
    expect(after.get(first.id)?.node).toEqual({ id: first.node.id, name: 'renamed' });
    expect(after.get(second.id)?.node).toEqual(second.node);
  });
});
