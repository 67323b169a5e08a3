import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver.js';
import {
  groupedAlert,
  nodesIn,
  outage,
  report,
  startEngineApp,
  subOrg,
  type EngineApp,
} from './support/incident-engine.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';
import { testCertificates } from './support/tls.js';
import {
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// One outage of 30 nodes, told on every channel through its incident: a signed webhook, Slack, Teams,
// PagerDuty (one dedup_key: trigger, update, resolve) and e-mail (three e-mails, not thirty), each message
// through the real delivery engine or outbox to local stand-ins.
let engine: EngineApp;
let smtp: SmtpSink;
let hook: ReceiverWithSecret;
let slack: HttpsReceiver;
let teams: HttpsReceiver;
let pagerDuty: HttpsReceiver;
const S = 1_000;
const SLACK_PATH = '/services/T0001/B0001/abcdefghijklmnopqrstWXYZ';
const TEAMS_PATH = '/workflows/123/triggers/manual/paths/invoke?sig=teamsSIGN';
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdefPDKY';

const standIn = (status: number, body: string) =>
  startHttpsReceiver(testCertificates().server, (_request, response) => {
    response.writeHead(status, { 'content-type': 'text/plain' });
    response.end(body);
  });

beforeAll(async () => {
  smtp = await startSmtpSink();
  hook = await startCorrectReceiver();
  slack = await standIn(200, 'ok');
  teams = await standIn(202, '');
  pagerDuty = await standIn(202, '{"status":"success"}');
  const access = receiverAccess();
  engine = await startEngineApp({
    ...access,
    env: {
      ...access.env,
      SMTP_URL: smtp.url,
      PAGERDUTY_EVENTS_URL: `${pagerDuty.url}/v2/enqueue`,
      PUBLIC_URL: 'https://edgewatch.example.com',
    },
  });
});
afterAll(async () => {
  await engine.t.close();
  await smtp.close();
  for (const receiver of [hook.receiver, slack, teams, pagerDuty]) await receiver.close();
});

/** Sends what the messages made: deliveries by the dispatcher, e-mails by the worker's outbox job. */
async function sendAll(): Promise<void> {
  await engine.t.dispatcher.runDue();
  await engine.t.worker.runDue();
}

const posts = (receiver: HttpsReceiver) =>
  receiver.requests.filter((request) => request.method === 'POST').map((request) => JSON.parse(request.body));

async function channel(body: Record<string, unknown>): Promise<string> {
  const res = await engine.t.request('POST', '/api/v1/channel', { body });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

describe('an outage on every channel', () => {
  it('is three messages per channel: the first word, one update, one resolve', async () => {
    const org = await subOrg(engine, 'Acme Paris');
    const nodes = await nodesIn(engine, org, 'paris', 30);
    const webhook = await enabledWebhook(engine.t, hook);
    const timing = { group_wait: 10, group_interval: 300 };
    await groupedAlert(engine, { ...timing, group_by: 'organization' }, 'NODE_STATE_CHANGE', {
      channel_type: 'webhook',
      channel_id: webhook.id,
    });
    const endpoints = [
      ['slack', { name: 'Slack', type: 'slack', url: `${slack.url}${SLACK_PATH}` }],
      ['msteams', { name: 'Teams', type: 'msteams', url: `${teams.url}${TEAMS_PATH}` }],
      ['pagerduty', { name: 'Pager', type: 'pagerduty', routing_key: ROUTING_KEY }],
    ] as const;
    for (const [type, body] of endpoints)
      await groupedAlert(engine, timing, 'NODE_STATE_CHANGE', {
        channel_type: type,
        channel_id: await channel(body),
      });
    await groupedAlert(engine, timing); // e-mail, grouped by organization by default

    const mailsBefore = smtp.messages.length;
    expect(await outage(engine)).toBe(30);
    await sendAll();
    engine.at.now += 10 * S;
    await engine.flushDue();
    await sendAll();
    for (const node of nodes) await report(engine, node.token);
    engine.at.now += 10 * S;
    await engine.flushDue();
    await sendAll();

    // The webhook: signed INCIDENT bodies (the receiver answers 401 to a bad signature), sequences 1, 2, 3.
    const bodies = posts(hook.receiver);
    expect(bodies.map((body) => [body.type, body.incident.sequence, body.incident.reason])).toEqual([
      ['INCIDENT', 1, 'opened'],
      ['INCIDENT', 2, 'updated'],
      ['INCIDENT', 3, 'resolved'],
    ]);
    const deliveryIds = hook.receiver.requests
      .filter((request) => request.method === 'POST')
      .map((request) => request.headers['x-service-delivery']);
    expect(new Set(deliveryIds).size).toBe(3);
    expect(bodies[1]).toMatchObject({
      alert: { name: 'Nodes down' },
      organization: { id: org, name: 'Acme Paris' },
      counts: {
        firing: 30,
        new: 29,
        recovered: 0,
        flaps: 0,
        behind_unreachable: 0,
        by_condition: { UNREACHABLE: 30 },
      },
      incident: { status: 'firing', members_omitted: 0, resolved_at: null },
    });
    expect(bodies[1].members).toHaveLength(30);
    expect(bodies[2]).toMatchObject({
      incident: { status: 'resolved' },
      counts: { firing: 0, recovered: 30 },
    });

    // Slack: a headline, 20 names and "and 10 more", a button to the incident.
    const slackPosts = posts(slack);
    expect(slackPosts).toHaveLength(3);
    const update = slackPosts[1];
    expect(update.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Acme Paris: 30 nodes UNREACHABLE (+29)' },
    });
    expect(JSON.stringify(update.blocks)).toContain('and 10 more');
    const button = update.blocks.at(-1).elements[0];
    // Each alert has its own incident: Slack's page is that of the Slack alert's.
    expect(button.url).toMatch(/^https:\/\/edgewatch\.example\.com\/#\/incidents\/[0-9a-f-]{36}$/);
    expect(update.blocks.length).toBeLessThanOrEqual(50);

    // Teams: one Adaptive Card per message.
    const teamsPosts = posts(teams);
    expect(teamsPosts).toHaveLength(3);
    expect(teamsPosts[1].attachments[0].contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(JSON.stringify(teamsPosts[1])).toContain('Acme Paris: 30 nodes UNREACHABLE (+29)');

    // PagerDuty: one dedup_key; the first word triggers, the update re-triggers, one resolve.
    const events = posts(pagerDuty);
    expect(events.map((event) => event.event_action)).toEqual(['trigger', 'trigger', 'resolve']);
    expect(new Set(events.map((event) => event.dedup_key)).size).toBe(1);
    expect(events[0].dedup_key).toMatch(/^edgewatch:/);
    expect(events[1].payload.custom_details.members).toHaveLength(30);
    expect(events[1].routing_key).toBe(ROUTING_KEY);

    // E-mail: three e-mails for thirty nodes, the headline as subject.
    const mails = smtp.messages.slice(mailsBefore);
    expect(mails.map((mail) => mail.subject)).toEqual([
      'Acme Paris: 1 node UNREACHABLE (+1)',
      'Acme Paris: 30 nodes UNREACHABLE (+29)',
      'Acme Paris: resolved (Nodes down)',
    ]);
    expect(mails[1]!.text).toContain('https://edgewatch.example.com/#/incidents/');

    // The webhook's delivery log lists the messages, about the organization.
    const log = await engine.t.request('GET', `/api/v1/webhook/${webhook.id}/deliveries`);
    expect(log.status, log.text).toBe(200);
    expect(log.body.total_count).toBe(3);
    expect(log.body.results[0].organization).toEqual({ id: org, name: 'Acme Paris' });
    const entry = await engine.t.request(
      'GET',
      `/api/v1/webhook/${webhook.id}/deliveries/${log.body.results[0].id}`,
    );
    expect(entry.status, entry.text).toBe(200);

    // A node's first report (ALIVE) with nothing firing: no PagerDuty event, no message anywhere.
    const before = [hook.receiver, slack, teams, pagerDuty].map((receiver) => posts(receiver).length);
    await nodesIn(engine, org, 'newcomer', 1);
    await sendAll();
    expect([hook.receiver, slack, teams, pagerDuty].map((receiver) => posts(receiver).length)).toEqual(
      before,
    );
  });
});
