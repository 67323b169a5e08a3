import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pagerDutySeverity } from '../src/features/channels/render.js';
import { listOutbox } from '../src/mail/repo.js';
import { expectError } from './support/error-shape.js';
import { aliveNode, silence, until } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from './support/https-receiver.js';
import { testCertificates } from './support/tls.js';
import { receiverAccess } from './support/webhooks.js';

// Slack, Teams and PagerDuty: local HTTPS stand-ins with the test CA receive what the vendors' documentation
// describes, from an agent's report to the message, through the webhooks' delivery engine.
let t: TestApp;
let orgId: string;
const SLACK_PATH = '/services/T0001/B0001/abcdefghijklmnopqrstWXYZ';
const TEAMS_PATH = '/workflows/123/triggers/manual/paths/invoke?sig=teamsSIGN';
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdefPDKY';
/** Per stand-in, the statuses (and Retry-After) to answer before answering as the vendor does. */
const scripted = new Map<HttpsReceiver, { status: number; retryAfter?: string }[]>();
/** Per path, what runs while a request to it waits for its answer: a test's barrier. */
const whileAnswering = new Map<string, () => Promise<void>>();
let slack: HttpsReceiver;
let teams: HttpsReceiver;
let pagerDuty: HttpsReceiver;

async function standIn(success: { status: number; body: string }): Promise<HttpsReceiver> {
  const receiver: HttpsReceiver = await startHttpsReceiver(
    testCertificates().server,
    async (request, response) => {
      const during = whileAnswering.get(request.url);
      whileAnswering.delete(request.url);
      await during?.();
      const next = scripted.get(receiver)?.shift();
      if (next !== undefined) {
        response.writeHead(
          next.status,
          next.retryAfter === undefined ? {} : { 'retry-after': next.retryAfter },
        );
        response.end('not now');
        return;
      }
      response.writeHead(success.status, { 'content-type': 'text/plain' });
      response.end(success.body);
    },
  );
  scripted.set(receiver, []);
  return receiver;
}

beforeAll(async () => {
  slack = await standIn({ status: 200, body: 'ok' });
  teams = await standIn({ status: 202, body: '' });
  pagerDuty = await standIn({ status: 202, body: '{"status":"success","message":"Event processed"}' });
  const access = receiverAccess();
  const env = {
    ...access.env,
    PAGERDUTY_EVENTS_URL: `${pagerDuty.url}/v2/enqueue`,
    DELIVERY_RETRY_SCHEDULE: '0',
    MAX_CHANNELS_PER_USER: '12',
    PUBLIC_URL: 'https://edgewatch.example.com',
  };
  t = await startTestApp({ ...access, env });
  orgId = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
});
afterAll(async () => {
  await t.close();
  for (const receiver of [slack, teams, pagerDuty]) await receiver.close();
});

async function channel(body: Record<string, unknown>, key?: string) {
  const res = await t.request('POST', '/api/v1/channel', { body, ...(key === undefined ? {} : { key }) });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; target: string; is_enabled: boolean };
}

/**
 * An alert on the channel for one node (UNREACHABLE only, for its state; every condition for another type), so
 * the tests' alerts do not fire for each other's nodes.
 */
async function alertOn(channelType: string, channelId: string, nodeId: string, type = 'NODE_STATE_CHANGE') {
  const conditions = type === 'NODE_STATE_CHANGE' ? { alert_me: 'UNREACHABLE' } : {};
  // One message per event: this file is about each channel's notification; incidents have their own.
  const settings = { org_id: orgId, node_id: nodeId, group_by: 'none', ...conditions };
  const res = await t.request('POST', '/api/v1/mysubscriptions', {
    body: {
      name: `${channelType} ${type}`,
      type,
      settings,
      channel_type: channelType,
      channel_id: channelId,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; channel_type: string; channel: { id: string; name: string } };
}

const postsTo = (receiver: HttpsReceiver, mentioning: string) =>
  receiver.requests.filter((r) => r.method === 'POST' && r.body.includes(mentioning));
const json = (request: ReceivedRequest) => JSON.parse(request.body) as Record<string, any>;

async function backAlive(token: string) {
  const res = await t.request('POST', '/api/v1/agent/report', {
    key: null,
    headers: { 'x-node-token': token },
  });
  expect(res.status, res.text).toBe(200);
}

describe('channels as a resource', () => {
  it('creates, lists, reads, renames and deletes, showing the URL or key only masked', async () => {
    const created = await channel({ name: 'Ops Slack', type: 'slack', url: `${slack.url}${SLACK_PATH}` });
    expect(created).toMatchObject({
      type: 'slack',
      is_enabled: true,
      disabled_reason: null,
      subscription_count: 0,
    });
    expect(created.target).toBe(`localhost:${slack.port} …WXYZ`);
    const key = await channel({ name: 'Pager', type: 'pagerduty', routing_key: ROUTING_KEY });
    expect(key.target).toBe('…PDKY');
    const list = await t.request('GET', '/api/v2/channel');
    expect(list.body.total_count).toBeGreaterThanOrEqual(2);
    expect(list.body.results.map((c: { id: string }) => c.id)).toEqual(
      expect.arrayContaining([created.id, key.id]),
    );
    const renamed = await t.request('PUT', `/api/v1/channel/${created.id}`, { body: { name: 'Ops' } });
    expect(renamed.body).toMatchObject({ name: 'Ops', target: created.target, is_enabled: true });
    expect((await t.request('GET', `/api/v1/channel/${created.id}`)).body.name).toBe('Ops');
    // Channels are not webhooks, and webhooks' routes do not reach them.
    const webhooks = await t.request('GET', '/api/v2/webhook');
    expect(webhooks.body.map((w: { id: string }) => w.id)).not.toContain(created.id);
    expect((await t.request('GET', `/api/v1/webhook/${created.id}`)).status).toBe(404);
    const removed = await t.request('DELETE', `/api/v1/channel/${key.id}`);
    expect(removed.body).toMatchObject({ id: key.id, status: 'SUCCESS' });
    expect((await t.request('GET', `/api/v1/channel/${key.id}`)).status).toBe(404);

    const everything = [list.text, renamed.text, JSON.stringify(created), t.logs.join('\n')].join('\n');
    expect(everything).not.toContain(SLACK_PATH);
    expect(everything).not.toContain(ROUTING_KEY);
    const openapi = await t.request('GET', '/docs/json');
    expect(openapi.text).not.toContain('hooks.slack.com/services/T');
  });

  it('refuses bad fields by name, changes nothing, and keeps other users out', async () => {
    const before = (await t.request('GET', '/api/v2/channel')).body.total_count as number;
    const cases: [Record<string, unknown>, number, string][] = [
      [{ name: 'x', type: 'slack' }, 400, 'url'],
      [{ name: 'x', type: 'pagerduty', url: `${slack.url}/x` }, 400, 'url'],
      [{ name: 'x', type: 'slack', url: `${slack.url}/x`, routing_key: ROUTING_KEY }, 400, 'routing_key'],
      [{ name: 'x', type: 'pagerduty', routing_key: 'short' }, 400, 'routing_key'],
      [{ name: 'x', type: 'msteams', url: 'http://example.com/hook' }, 400, 'url'],
      [{ name: 'x', type: 'msteams', url: 'https://10.0.0.1/hook' }, 422, 'url'],
      [{ name: 'x', type: 'sms', url: `${slack.url}/x` }, 400, 'type'],
      [{ name: '', type: 'slack', url: `${slack.url}/x` }, 400, 'name'],
    ];
    for (const [body, status, field] of cases) {
      const res = await t.request('POST', '/api/v1/channel', { body });
      expectError(res, status, status === 400 ? 'BAD_REQUEST' : 'UNPROCESSABLE_ENTITY');
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await t.request('GET', '/api/v2/channel')).body.total_count).toBe(before);

    const mine = await channel({ name: 'Mine', type: 'msteams', url: `${teams.url}${TEAMS_PATH}` });
    const other = await t.userWithRoles(['operator']);
    for (const [method, path] of [
      ['GET', `/api/v1/channel/${mine.id}`],
      ['PUT', `/api/v1/channel/${mine.id}`],
      ['POST', `/api/v1/channel/${mine.id}/test`],
      ['DELETE', `/api/v1/channel/${mine.id}`],
      ['GET', `/api/v1/channel/${mine.id}/deliveries`],
    ] as const) {
      const body =
        method === 'PUT'
          ? { name: 'theirs' }
          : method === 'POST'
            ? { alert_type: 'NODE_STATE_CHANGE' }
            : undefined;
      const res = await t.request(method, path, { key: other.key, ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const onTheirs = await t.request('POST', '/api/v1/mysubscriptions', {
      key: other.key,
      body: {
        name: 'x',
        type: 'NODE_STATE_CHANGE',
        settings: { org_id: orgId },
        channel_type: 'msteams',
        channel_id: mine.id,
      },
    });
    expect(onTheirs.status).toBe(404);
  });

  it('allows MAX_CHANNELS_PER_USER channels per user', async () => {
    const user = await t.userWithRoles(['operator']);
    for (let n = 0; n < 12; n += 1)
      await channel({ name: `Pager ${n}`, type: 'pagerduty', routing_key: ROUTING_KEY }, user.key);
    const seventh = await t.request('POST', '/api/v1/channel', {
      key: user.key,
      body: { name: 'One more', type: 'pagerduty', routing_key: ROUTING_KEY },
    });
    expectError(seventh, 422, 'UNPROCESSABLE_ENTITY');
  });
});

describe('from a report to the vendor', () => {
  it('posts Slack a message with text and blocks, and the alert names its channel', async () => {
    const hook = await channel({ name: 'Ops Slack', type: 'slack', url: `${slack.url}${SLACK_PATH}` });
    const node = await aliveNode(t, 'slack-node-1');
    const alert = await alertOn('SLACK', hook.id, node.id);
    expect(alert).toMatchObject({ channel_type: 'SLACK', channel: { id: hook.id, name: 'Ops Slack' } });
    await silence(t, node.id);
    await until('the Slack message', () => postsTo(slack, 'slack-node-1').length === 1);
    const [request] = postsTo(slack, 'slack-node-1');
    expect(request!.url).toBe(SLACK_PATH);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers).not.toHaveProperty('x-service-signature');
    const message = json(request!);
    expect(message.text).toContain('slack-node-1');
    expect(message.blocks.map((block: { type: string }) => block.type)).toEqual([
      'header',
      'section',
      'section',
      'actions',
    ]);
    expect(message.blocks[0].text).toEqual({
      type: 'plain_text',
      text: 'Node state change: Node slack-node-1 is UNREACHABLE',
    });
    const fields = message.blocks[2].fields.map((field: { text: string }) => field.text);
    expect(fields).toEqual(expect.arrayContaining(['*Node*\nslack-node-1', '*State*\nALIVE → UNREACHABLE']));
    const notification = (await t.request('GET', `/api/v2/notification?node_id=${node.id}`)).body.results[0];
    expect(message.blocks[3].elements[0]).toMatchObject({
      type: 'button',
      url: `https://edgewatch.example.com/#/notifications/${notification.id}`,
    });
    await until('delivered', async () => {
      const log = await t.request('GET', `/api/v1/channel/${hook.id}/deliveries`);
      return log.body.results[0]?.status === 'delivered';
    });
    const [entry] = (await t.request('GET', `/api/v1/channel/${hook.id}/deliveries`)).body.results;
    expect(entry).toMatchObject({
      organization: notification.organization,
      node: { id: node.id, name: 'slack-node-1' },
      resource: null,
    });
  });

  it('posts Teams a message with one Adaptive Card attachment, and takes its 202', async () => {
    const hook = await channel({ name: 'Ops Teams', type: 'msteams', url: `${teams.url}${TEAMS_PATH}` });
    const node = await aliveNode(t, 'teams-node-1');
    await alertOn('msteams', hook.id, node.id);
    await silence(t, node.id);
    await until('the Teams message', () => postsTo(teams, 'teams-node-1').length === 1);
    const [request] = postsTo(teams, 'teams-node-1');
    expect(request!.url).toBe(TEAMS_PATH);
    const message = json(request!);
    expect(message.type).toBe('message');
    expect(message.attachments).toHaveLength(1);
    const [attachment] = message.attachments;
    expect(attachment.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(attachment.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(attachment.content.$schema).toBe('http://adaptivecards.io/schemas/adaptive-card.json');
    const facts = attachment.content.body.find((item: { type: string }) => item.type === 'FactSet').facts;
    expect(facts).toEqual(expect.arrayContaining([{ title: 'State', value: 'ALIVE → UNREACHABLE' }]));
    expect(attachment.content.actions[0]).toMatchObject({ type: 'Action.OpenUrl' });
    await until('delivered', async () => {
      const log = await t.request('GET', `/api/v1/channel/${hook.id}/deliveries`);
      return log.body.results[0]?.status === 'delivered';
    });
  });

  it('triggers a PagerDuty incident and resolves it on the return to ALIVE, which alert_me does not name', async () => {
    const pager = await channel({ name: 'On call', type: 'pagerduty', routing_key: ROUTING_KEY });
    const node = await aliveNode(t, 'pd-node-1');
    const alert = await alertOn('pagerduty', pager.id, node.id);
    await silence(t, node.id);
    await until('the trigger', () => postsTo(pagerDuty, 'pd-node-1').length === 1);
    await backAlive(node.token);
    await until('the resolve', () => postsTo(pagerDuty, 'pd-node-1').length === 2);
    const [trigger, resolve] = postsTo(pagerDuty, 'pd-node-1').map(json);
    expect(postsTo(pagerDuty, 'pd-node-1')[0]!.url).toBe('/v2/enqueue');
    expect(trigger).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: `${alert.id}:${node.id}`,
      payload: {
        severity: 'critical',
        source: 'pd-node-1',
        component: 'pd-node-1',
        class: 'NODE_STATE_CHANGE',
        summary: 'Node state change: Node pd-node-1 is UNREACHABLE',
      },
    });
    expect(Object.keys(trigger!.payload).sort()).toEqual(
      ['class', 'component', 'custom_details', 'group', 'severity', 'source', 'summary', 'timestamp'].sort(),
    );
    expect(trigger!.links[0].href).toMatch(/^https:\/\/edgewatch\.example\.com\/#\/notifications\//);
    expect(resolve).toMatchObject({
      event_action: 'resolve',
      dedup_key: trigger!.dedup_key,
      routing_key: ROUTING_KEY,
    });
  });

  it("resolves a certificate's incident when the node reports a renewed certificate", async () => {
    const pager = await channel({ name: 'Certificates', type: 'pagerduty', routing_key: ROUTING_KEY });
    const node = await aliveNode(t, 'pd-cert-node');
    const alert = await alertOn('pagerduty', pager.id, node.id, 'CERT_EXPIRY');
    const day = 86_400_000;
    const certificate = (notBefore: number, notAfter: number) => ({
      certificate: {
        not_before: new Date(notBefore).toISOString(),
        not_after: new Date(notAfter).toISOString(),
      },
    });
    const report = (body: object) =>
      t.request('POST', '/api/v1/agent/report', { key: null, headers: { 'x-node-token': node.token }, body });
    // 80 % of its validity has passed: the check is due at once.
    expect((await report(certificate(Date.now() - 90 * day, Date.now() + 10 * day))).status).toBe(200);
    await until('the warning', () => postsTo(pagerDuty, 'pd-cert-node').length === 1);
    expect((await report(certificate(Date.now(), Date.now() + 365 * day))).status).toBe(200);
    await until('the resolve', () => postsTo(pagerDuty, 'pd-cert-node').length === 2);
    const [warning, renewed] = postsTo(pagerDuty, 'pd-cert-node').map(json);
    expect(warning).toMatchObject({
      event_action: 'trigger',
      dedup_key: `${alert.id}:${node.id}`,
      payload: { severity: 'warning', class: 'CERT_EXPIRY' },
    });
    expect(renewed).toMatchObject({ event_action: 'resolve', dedup_key: warning!.dedup_key });
    expect(renewed!.payload.custom_details.message).toMatch(/was renewed; it now expires on/);
    const events = await t.request('GET', `/api/v2/event?node_id=${node.id}&type=CERT_EXPIRY`);
    expect(events.body.results.map((event: { condition: string }) => event.condition)).toEqual([
      'RENEWED',
      '80',
    ]);
  });

  it('resolves a headless-time incident when the node reports again', async () => {
    const pager = await channel({ name: 'Headless', type: 'pagerduty', routing_key: ROUTING_KEY });
    const node = await aliveNode(t, 'pd-headless-node');
    const alert = await alertOn('pagerduty', pager.id, node.id, 'HEADLESS_EXPIRY');
    await silence(t, node.id);
    await backAlive(node.token);
    await until('the resolve', () => postsTo(pagerDuty, 'pd-headless-node').length === 1);
    const [resolve] = postsTo(pagerDuty, 'pd-headless-node').map(json);
    expect(resolve).toMatchObject({ event_action: 'resolve', dedup_key: `${alert.id}:${node.id}` });
  });

  it('maps each condition to its PagerDuty severity', () => {
    const expected = {
      critical: ['UNREACHABLE', 'TERMINATED', 'UNHEALTHY', '100'],
      warning: ['80'],
      info: [
        'ALIVE',
        'CONNECTED',
        'HEALTHY',
        'PRIVATE_IP',
        'PUBLIC_IP',
        'ENABLED',
        'DISABLED',
        'SUCCESSFUL',
        'FAILED',
      ],
    };
    for (const [severity, conditions] of Object.entries(expected))
      for (const condition of conditions) expect(pagerDutySeverity(condition), condition).toBe(severity);
  });
});

describe('failures', () => {
  it("honours Slack's 429 Retry-After before the next request", async () => {
    const hook = await channel({ name: 'Throttled', type: 'slack', url: `${slack.url}${SLACK_PATH}` });
    const node = await aliveNode(t, 'throttled-node');
    await alertOn('slack', hook.id, node.id);
    scripted.get(slack)!.push({ status: 429, retryAfter: '1' });
    await silence(t, node.id);
    await until('the retry after the 429 delivered', async () => {
      const log = await t.request('GET', `/api/v1/channel/${hook.id}/deliveries`);
      return log.body.results[0]?.status === 'delivered';
    });
    expect(postsTo(slack, 'throttled-node')).toHaveLength(2);
    const log = await t.request('GET', `/api/v1/channel/${hook.id}/deliveries`);
    const detail = await t.request('GET', `/api/v1/channel/${hook.id}/deliveries/${log.body.results[0].id}`);
    const [refused, accepted] = detail.body.attempt_log as { at: string; status_code: number }[];
    expect([refused!.status_code, accepted!.status_code]).toEqual([429, 200]);
    // Retry-After: 1 (the schedule's own wait is 0 here), less the jitter's 20 %.
    expect(Date.parse(accepted!.at) - Date.parse(refused!.at)).toBeGreaterThanOrEqual(800);
  });

  it('disables a channel at the 10th failure and tells its owner; a successful test enables it and sends what it held', async () => {
    const hook = await channel({ name: 'Flaky Teams', type: 'msteams', url: `${teams.url}/flaky` });
    const node = await aliveNode(t, 'flaky-node');
    await alertOn('msteams', hook.id, node.id);
    scripted.get(teams)!.push(...Array.from({ length: 10 }, () => ({ status: 500 })));
    await silence(t, node.id);
    await until(
      'disabled',
      async () => (await t.request('GET', `/api/v1/channel/${hook.id}`)).body.is_enabled === false,
    );
    expect((await t.request('GET', `/api/v1/channel/${hook.id}`)).body.disabled_reason).toBe('failing');
    const told = (await listOutbox(t.ctx.db)).filter((mail) =>
      mail.subject.includes('Channel "Flaky Teams" was disabled'),
    );
    expect(told).toHaveLength(1);
    expect(JSON.stringify(told[0])).not.toContain('/flaky');
    const held = await t.request('GET', `/api/v1/channel/${hook.id}/deliveries?status=held`);
    expect(held.body.total_count).toBe(1);

    const test = await t.request('POST', `/api/v1/channel/${hook.id}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(test.body).toMatchObject({ status: 202 });
    expect((await t.request('GET', `/api/v1/channel/${hook.id}`)).body).toMatchObject({
      is_enabled: true,
      disabled_reason: null,
    });
    await until('the held notification sent', async () => {
      const log = await t.request('GET', `/api/v1/channel/${hook.id}/deliveries?status=delivered`);
      return log.body.total_count === 1;
    });
  });
});

describe('races', () => {
  it('does not enable a channel that was edited while its test was out', async () => {
    const hook = await channel({ name: 'Edited mid-test', type: 'msteams', url: `${teams.url}/mid-test` });
    await t.ctx.db
      .updateTable('webhooks')
      .set({ is_enabled: 0, disabled_reason: 'failing' })
      .where('id', '=', hook.id)
      .execute();
    whileAnswering.set('/mid-test', async () => {
      const edited = await t.request('PUT', `/api/v1/channel/${hook.id}`, {
        body: { url: `${teams.url}/elsewhere` },
      });
      expect(edited.status, edited.text).toBe(200);
    });
    const test = await t.request('POST', `/api/v1/channel/${hook.id}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(test.body).toMatchObject({ status: 202 });
    // The 2xx proved the old URL, not the new one: the channel stays disabled until a test of what it is now.
    expect((await t.request('GET', `/api/v1/channel/${hook.id}`)).body).toMatchObject({ is_enabled: false });
    const again = await t.request('POST', `/api/v1/channel/${hook.id}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(again.body).toMatchObject({ status: 202 });
    expect((await t.request('GET', `/api/v1/channel/${hook.id}`)).body).toMatchObject({ is_enabled: true });
  });

  it('holds MAX_CHANNELS_PER_USER against a burst of creations at once', async () => {
    const user = await t.userWithRoles(['operator']);
    const burst = await Promise.all(
      Array.from({ length: 16 }, (_, n) =>
        t.request('POST', '/api/v1/channel', {
          key: user.key,
          body: { name: `Burst ${n}`, type: 'pagerduty', routing_key: ROUTING_KEY },
        }),
      ),
    );
    expect(burst.filter((res) => res.status === 201)).toHaveLength(12);
    expect(burst.filter((res) => res.status === 422)).toHaveLength(4);
    expect((await t.request('GET', '/api/v2/channel', { key: user.key })).body.total_count).toBe(12);
  });
});
