// The mass-outage section: 5,000 nodes in 10 organizations stop reporting at once. The liveness sweep finds them
// UNREACHABLE in one pass, and four organization-wide alerts grouped by organization (a webhook, Slack,
// PagerDuty and e-mail, each to a stand-in in the runner) tell it as incidents: how many messages, how soon
// the first and the last; then the fleet returns and each incident sends its resolve. Beside it, in the same
// run, Alertmanager grouping the same 5,000 alerts by organization with the same wait.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SWEEP_EVERY_MS } from '../../src/features/fleet/liveness/sweep.js';
import type { AdminApi } from '../lib/api.js';
import type { Common } from '../lib/options.js';
import * as r from '../lib/report.js';
import * as service from '../lib/service.js';
import { findAlertmanager } from '../notify/anchors.js';
import { seedDatabase } from '../notify/seed.js';
import { measureAlertmanager, type AnchorRun } from './alertmanager.js';
import {
  Agents,
  awaitSweepWindow,
  orgName,
  registerFleet,
  REGISTER_IN_FLIGHT,
  REPORTS_IN_FLIGHT,
  sweepPhase,
} from './fleet.js';
import {
  CHANNELS,
  PAGERDUTY_PATH,
  SLACK_PATH,
  startStandIns,
  type Arrival,
  type Channel,
  type StandIns,
} from './sinks.js';

const NAME = 'outage: SQLite, 10 organizations × 500 nodes, 4 channels';
const ALERTMANAGER = 'outage anchor: Alertmanager';
export const OUTAGE_CASES: r.Case[] = [
  { name: NAME, anchors: [ALERTMANAGER] },
  { name: ALERTMANAGER, anchor: true },
];

const ORGS = 10;
const PER_ORG = 500;
const NODES = ORGS * PER_ORG;
const GROUP_WAIT_S = 10;
/**
 * A pass of the sweep is set by its tick (every SWEEP_EVERY_MS), not by the timeout: the last reports are sent
 * between two of its cut-offs (fleet.ts awaitSweepWindow), so one pass finds them all. The timeout only has to
 * outlast the setup between a node's first report and its last (5 to 9 s here), so that no node goes silent
 * early: the smallest allowed (1 s) would not. The setup stops if one does.
 */
const HEARTBEAT_TIMEOUT_S = 12;
/** How much later than the probe found it the sweep may read its clock at the outage (fleet.ts). */
const SWEEP_DRIFT_MS = 400;
/** After the return: each node reports again this long after its last report, within the timeout. */
const KEEP_REPORTING_MS = 10_000;
/** Waited beyond the last message expected, and then until no message has come for QUIET_MS. */
const SETTLE_MS = 4_000;
const QUIET_MS = 2_000;
const ROUTING_KEY = 'R0UT1NGKEY0OUTAGE0BENCH0PDKY';
const GOAL = { perOrg: 2, resolvesPerOrg: 1, firstS: 1, lastS: GROUP_WAIT_S + 2 };

const seconds = (ms: number) => r.fixed(ms / 1000, 2);
const ratio = (a: number | undefined, b: number | undefined) =>
  r.fixed(a === undefined || b === undefined ? undefined : a / b, 2);
const iso = (ms: number) => new Date(ms).toISOString();

/** What one channel received within a phase: how many, per organization, first and last arrival. */
function figures(arrivals: Arrival[], orgs: string[]) {
  const perOrg = orgs.map((org) => arrivals.filter((a) => a.org === org).length);
  const times = arrivals.map((a) => a.at);
  return {
    count: arrivals.length,
    minPerOrg: Math.min(...perOrg),
    maxPerOrg: Math.max(...perOrg),
    strays: arrivals.filter((a) => !orgs.includes(a.org)).length,
    first: times.length === 0 ? undefined : Math.min(...times),
    last: times.length === 0 ? undefined : Math.max(...times),
  };
}

/** Waits until `from` + `afterMs`, then until `expected` holds and no message has come for QUIET_MS. */
async function settle(
  arrivals: Map<Channel, Arrival[]>,
  from: number,
  afterMs: number,
  expected = () => true,
) {
  await sleep(Math.max(0, from + afterMs - Date.now()));
  const deadline = Date.now() + 60_000;
  const latest = () => Math.max(0, ...[...arrivals.values()].flatMap((list) => list.map((a) => a.at)));
  while (Date.now() < deadline && (!expected() || Date.now() - latest() < QUIET_MS)) await sleep(100);
}

/** Every UNREACHABLE event since `from`: how many, and the sweep passes that made them (their detected_at). */
async function sweepPasses(api: AdminApi, from: number) {
  const passes = new Map<number, number>();
  const query = `/api/v2/event?type=NODE_STATE_CHANGE&start_date=${from}&size=100`;
  for (let page = 0; ; page += 1) {
    const { results } = await api.call('GET', `${query}&page=${page}`);
    for (const event of results as { condition: string; detected_at: string }[]) {
      if (event.condition !== 'UNREACHABLE') continue;
      const at = Date.parse(event.detected_at);
      passes.set(at, (passes.get(at) ?? 0) + 1);
    }
    if (results.length < 100) break;
  }
  const times = [...passes.keys()].sort((a, b) => a - b);
  return { events: [...passes.values()].reduce((a, b) => a + b, 0), times, first: times[0] ?? NaN };
}

interface ServiceRun {
  registerMs: number;
  /** The sweep's phase past its tick, from the probe node (fleet.ts sweepPhase). */
  phaseMs: number;
  firstReports: { startedAt: number; answeredAt: number };
  lastReports: { startedAt: number; answeredAt: number; opensAt: number; closesAt: number; passAt: number };
  sweep: Awaited<ReturnType<typeof sweepPasses>>;
  /** When polling first saw every node UNREACHABLE; the API's slowest answer to that polling. */
  allUnreachableAt: number;
  slowestAnswerMs: number;
  outage: Map<Channel, Arrival[]>;
  back: { startedAt: number; answeredAt: number; lastRecovery: number };
  returned: Map<Channel, Arrival[]>;
  /** UNREACHABLE events after the return: nodes the fleet's reports did not keep ALIVE. */
  lateUnreachable: number;
  /** Per channel, from the incidents API. */
  incidents: Map<Channel, IncidentFacts>;
  /** Answers of the API that kept a figure from being read. */
  problems: string[];
}

/** A channel's incidents: how many, resolved, their messages (when each was made), the requests made. */
interface IncidentFacts {
  incidents: number;
  resolved: number;
  /** Each message's made time (created_at) and reason. */
  messages: { at: number; reason: string }[];
  deliveries: number;
  requests: number;
  /** The first request that failed, from the endpoint's delivery log. */
  firstFailure: string | undefined;
}

/**
 * Per channel, its alert's incidents and their messages, each with its deliveries (GET /api/v1/incident/{id});
 * for one delivery that took more than one request, its first request (`endpoints`: the delivery log of each
 * webhook or channel, /api/v1/webhook/{id} or /api/v1/channel/{id}).
 */
async function incidentFacts(api: AdminApi, alerts: Map<string, Channel>, endpoints: Map<Channel, string>) {
  const facts = new Map<Channel, IncidentFacts>();
  for (const c of CHANNELS)
    facts.set(c, {
      incidents: 0,
      resolved: 0,
      messages: [],
      deliveries: 0,
      requests: 0,
      firstFailure: undefined,
    });
  const retried = new Map<Channel, string>();
  const listed = await api.call('GET', '/api/v2/incident?size=100');
  for (const { id } of listed.results as { id: string }[]) {
    const incident = await api.call('GET', `/api/v1/incident/${id}`);
    const channel = alerts.get(incident.alert.id)!;
    const of = facts.get(channel)!;
    of.incidents += 1;
    of.resolved += incident.status === 'resolved' ? 1 : 0;
    for (const message of incident.messages as { created_at: string; reason: string; deliveries: any[] }[]) {
      of.messages.push({ at: Date.parse(message.created_at), reason: message.reason });
      for (const delivery of message.deliveries as { id: string; attempts: number }[]) {
        of.deliveries += 1;
        of.requests += delivery.attempts;
        if (delivery.attempts > 1 && !retried.has(channel)) retried.set(channel, delivery.id);
      }
    }
  }
  const problems: string[] = [];
  for (const [channel, deliveryId] of retried) {
    const route = `${endpoints.get(channel)}/deliveries/${deliveryId}`;
    const answer = await api.request('GET', route);
    const first = answer.body?.attempt_log?.[0];
    if (first === undefined) problems.push(`outage: GET ${route} answered ${answer.status}`);
    else
      facts.get(channel)!.firstFailure =
        `${first.failure} (${first.error}), started ${iso(Date.parse(first.at))}, ended after ${seconds(first.duration_ms)} s`;
  }
  return { facts, problems };
}

type Targets = readonly (readonly [Channel, string, string | undefined])[];

/** The four alerts, one per channel, on the root organization and every organization below it. */
async function createAlerts(api: AdminApi, targets: Targets) {
  const { org_id } = await api.call('GET', '/api/v1/user/me');
  const settings = {
    ...{ org_id, include_child: true, alert_me: 'UNREACHABLE' },
    ...{ group_by: 'organization', group_wait: GROUP_WAIT_S },
  };
  const alerts = new Map<string, Channel>();
  for (const [name, channel_type, channel_id] of targets) {
    const alert = { name: `Outage to ${name}`, type: 'NODE_STATE_CHANGE', settings, channel_type };
    const body = { ...alert, ...(channel_id && { channel_id }) };
    alerts.set((await api.call('POST', '/api/v1/mysubscriptions', body)).id as string, name);
  }
  return alerts;
}

async function measureService(
  common: Common,
  dir: string,
  sinks: StandIns,
  secret: string,
): Promise<ServiceRun> {
  const url = `sqlite:${path.join(dir, 'edgewatch.db')}`;
  r.progress(
    `outage: a fresh SQLite database, the service with NODE_HEARTBEAT_TIMEOUT_S=${HEARTBEAT_TIMEOUT_S}`,
  );
  const seeded = await seedDatabase(url, 0);
  const env = {
    ...seeded.env,
    NODE_HEARTBEAT_TIMEOUT_S: String(HEARTBEAT_TIMEOUT_S),
    SMTP_URL: sinks.smtpUrl,
    PAGERDUTY_EVENTS_URL: sinks.url(PAGERDUTY_PATH),
    ...service.localWebhooksEnv(common.certificates),
  };
  const logFile = path.join(dir, 'serve.log');
  const started = await service.startService({ nodeOptions: common.nodeOptions, logFile, env });
  let agents: Agents | undefined;
  try {
    const [api, baseUrl] = [started.api!, started.baseUrl!];
    const phaseOf = await sweepPhase(api, baseUrl);
    r.progress(`outage: registering ${ORGS} organizations × ${PER_ORG} nodes through the API`);
    const { tokens, ms: registerMs } = await registerFleet(api, ORGS, PER_ORG);
    const hook = await service.verifiedWebhook(api, 'Outage receiver', sinks.url('/hook'), secret);
    const channel = async (body: object) => (await api.call('POST', '/api/v1/channel', body)).id as string;
    const slack = await channel({ name: 'Outage Slack', type: 'slack', url: sinks.url(SLACK_PATH) });
    const pagerDuty = await channel({
      name: 'Outage PagerDuty',
      type: 'pagerduty',
      routing_key: ROUTING_KEY,
    });
    r.progress('outage: waiting for the sweep to find the probe node, for its phase');
    const phaseMs = await phaseOf();
    agents = new Agents(baseUrl, tokens);
    r.progress(`outage: every node reports once (NEW → ALIVE), ${REPORTS_IN_FLIGHT} in flight`);
    const firstReports = await agents.burst();
    // After the first reports: a PagerDuty alert also takes each node's NEW → ALIVE (a return to good).
    const alerts = await createAlerts(api, [
      ['webhook', 'webhook', hook],
      ['Slack', 'slack', slack],
      ['PagerDuty', 'pagerduty', pagerDuty],
      ['e-mail', 'email', undefined],
    ]);

    // The last reports, between two of the sweep's cut-offs; then every node is silent.
    const window = await awaitSweepWindow(HEARTBEAT_TIMEOUT_S, phaseMs, SWEEP_DRIFT_MS);
    r.progress('outage: every node reports once more, then all stop');
    const last = await agents.burst();
    const lastReports = { ...last, ...window };
    // The probe node is UNREACHABLE already.
    const unreachable = async () => (await api.count('/api/v2/node?node_state=UNREACHABLE')) - 1;
    if ((await unreachable()) > 0)
      throw new Error('nodes went UNREACHABLE before the outage: the timeout is too short for the setup');
    r.progress(`outage: the sweep of ${iso(window.passAt)} is to find ${r.whole(NODES)} nodes silent`);
    let slowestAnswerMs = 0;
    const timed = async () => {
      const asked = performance.now();
      const count = await unreachable();
      slowestAnswerMs = Math.max(slowestAnswerMs, performance.now() - asked);
      return count;
    };
    await r.until(async () => (await timed()) === NODES, `${NODES} nodes UNREACHABLE`, 250);
    const allUnreachableAt = Date.now();
    await settle(sinks.arrivals, allUnreachableAt, GROUP_WAIT_S * 1_000 + SETTLE_MS);
    const sweep = await sweepPasses(api, last.startedAt);
    const outage = new Map([...sinks.arrivals].map(([c, list]) => [c, list.splice(0)]));

    // The fleet returns, and keeps reporting (as agents do) so that the sweep finds no node silent again.
    r.progress(
      `outage: the fleet returns, every node reports again, then every ${KEEP_REPORTING_MS / 1000} s`,
    );
    agents.lastAt.fill(NaN);
    const stopReporting = agents.keepReporting(KEEP_REPORTING_MS);
    try {
      const returning = await agents.burst();
      const [newest] = (await api.call('GET', '/api/v2/event?type=NODE_STATE_CHANGE&size=1')).results;
      const back = { ...returning, lastRecovery: Date.parse(newest.detected_at) };
      const resolvedAll = () =>
        CHANNELS.every(
          (c) =>
            new Set(
              sinks.arrivals
                .get(c)!
                .filter((a) => a.resolved)
                .map((a) => a.org),
            ).size >= ORGS,
        );
      await settle(sinks.arrivals, back.lastRecovery, GROUP_WAIT_S * 1_000 + SETTLE_MS, resolvedAll);
      const returned = new Map([...sinks.arrivals].map(([c, list]) => [c, list.splice(0)]));
      const lateUnreachable = (await sweepPasses(api, returning.startedAt)).events;
      const endpoints = new Map<Channel, string>([
        ['webhook', `/api/v1/webhook/${hook}`],
        ['Slack', `/api/v1/channel/${slack}`],
        ['PagerDuty', `/api/v1/channel/${pagerDuty}`],
      ]);
      const { facts: incidents, problems } = await incidentFacts(api, alerts, endpoints);
      return {
        ...{ registerMs, phaseMs, firstReports, lastReports, sweep, allUnreachableAt },
        ...{ slowestAnswerMs, outage, back, returned, lateUnreachable, incidents, problems },
      };
    } finally {
      await stopReporting();
    }
  } finally {
    await agents?.close();
    await started.stop();
  }
}

export async function runOutageSection(cases: r.Case[], common: Common): Promise<r.SectionResult> {
  const out = r.emptyResult();
  const loadBefore = os.loadavg()[0] ?? 0;
  const dir = path.join(common.workDir, 'outage');
  fs.mkdirSync(dir, { recursive: true });
  const alertmanager = cases.some((c) => c.name === ALERTMANAGER) ? findAlertmanager() : undefined;
  const secret = randomBytes(24).toString('base64url');
  const sinks = await startStandIns(common.certificates, secret);
  let ours: ServiceRun | undefined;
  let anchor: AnchorRun | undefined;
  try {
    if (cases.some((c) => c.name === NAME)) ours = await measureService(common, dir, sinks, secret);
    // After the service has stopped, so that the two share the machine with nothing else.
    if (alertmanager) {
      const o = { dir: path.join(dir, 'alertmanager'), caFile: common.certificates.caFile, sinks };
      anchor = await measureAlertmanager(
        alertmanager.path,
        { ...o, orgs: ORGS, perOrg: PER_ORG, groupWaitS: GROUP_WAIT_S },
        (from, expected) => settle(sinks.arrivals, from, GROUP_WAIT_S * 1_000 + SETTLE_MS, expected),
      );
    }
  } finally {
    await sinks.close();
  }
  out.warnings.push(...sinks.unknown.map((why) => `outage: a request no stand-in could read: ${why}`));
  const orgs = Array.from({ length: ORGS }, (_, n) => orgName(n));
  const am = anchor && figures(anchor.arrivals, orgs);
  const amFirst = am?.first === undefined ? undefined : am.first - anchor!.sentAt;
  const amLast = am?.last === undefined ? undefined : am.last - anchor!.sentAt;

  out.output.push(
    `Mass outage: one \`serve\` process on SQLite, NODE_HEARTBEAT_TIMEOUT_S=${HEARTBEAT_TIMEOUT_S} (the sweep every ` +
      `${SWEEP_EVERY_MS / 1000} s); ${ORGS} organizations below the root, ${PER_ORG} nodes each, registered through ` +
      'the API; four NODE_STATE_CHANGE alerts on the root (include_child, alert_me UNREACHABLE, group_by ' +
      `organization, group_wait ${GROUP_WAIT_S} s): a verified webhook, a Slack channel, a PagerDuty channel and ` +
      'e-mail, to stand-ins in the runner (HTTPS with the bench CA; an SMTP server). Times are from the ' +
      "sweep's detected_at (its UNREACHABLE events) to each message received whole; load average (1 min) at " +
      `the start ${loadBefore.toFixed(2)}`,
  );
  out.output.push(
    alertmanager
      ? `Anchor: ${alertmanager.version}, route group_by [org], group_wait ${GROUP_WAIT_S}s, group_interval 5m, ` +
          `a webhook receiver; the same ${r.whole(NODES)} alerts (alertname, org, node) in one POST /api/v2/alerts, ` +
          'times from that POST. Its resolves go out group_interval (5 m) after a group’s last message: not waited for'
      : 'Alertmanager is not installed (`apt-get install prometheus-alertmanager`): its anchor is skipped',
  );
  if (ours !== undefined) {
    const s = ours;
    const { registerMs, firstReports, lastReports, sweep, back } = s;
    const span = (x: { startedAt: number; answeredAt: number }) => seconds(x.answeredAt - x.startedAt);
    const within =
      lastReports.startedAt >= lastReports.opensAt && lastReports.answeredAt <= lastReports.closesAt;
    out.output.push(
      `Setup: ${r.whole(NODES)} nodes registered in ${seconds(registerMs)} s ` +
        `(${r.whole((NODES * 1000) / registerMs)}/s, ${REGISTER_IN_FLIGHT} in flight); every node reported ` +
        `(NEW → ALIVE, ${REPORTS_IN_FLIGHT} in flight) in ${span(firstReports)} s, then once more in ` +
        `${span(lastReports)} s, ${within ? 'within' : 'NOT within'} the window of one pass (the sweep's phase, ` +
        `from a probe node: ${r.whole(s.phaseMs)} ms past its tick; window ${seconds(lastReports.closesAt - lastReports.opensAt)} s)`,
      `Sweep: ${sweep.times.length} pass(es) (detected_at ${sweep.times.map(iso).join(', ')}; due at ` +
        `${iso(lastReports.passAt)} + phase), ${r.whole(sweep.events)} UNREACHABLE events; all ${r.whole(NODES)} ` +
        `nodes UNREACHABLE ${seconds(s.allUnreachableAt - sweep.first)} s after detected_at (polled every 0.25 s; ` +
        `the pass's phase ${r.whole(sweep.first % SWEEP_EVERY_MS)} ms); the API's slowest answer to that polling ` +
        `${seconds(s.slowestAnswerMs)} s`,
      `Return: every node reports again (UNREACHABLE → ALIVE) in ${span(back)} s, last recovery at ` +
        `${iso(back.lastRecovery)}; then each node again ${KEEP_REPORTING_MS / 1000} s after its last report`,
    );
    if (sweep.times.length !== 1)
      out.warnings.push(`outage: the sweep took ${sweep.times.length} passes, not 1`);
    if (sweep.events !== NODES)
      out.warnings.push(`outage: ${sweep.events} UNREACHABLE events for ${NODES} nodes`);
    out.warnings.push(...s.problems);
    if (s.lateUnreachable > 0)
      out.warnings.push(`outage: ${s.lateUnreachable} nodes went UNREACHABLE again after the return`);

    const outageRows: string[][] = [];
    const returnRows: string[][] = [];
    for (const c of CHANNELS) {
      const during = figures(s.outage.get(c)!, orgs);
      const first = during.first === undefined ? undefined : during.first - sweep.first;
      const last = during.last === undefined ? undefined : during.last - sweep.first;
      const made = s.incidents.get(c)!;
      // The outage's messages as the service made them (created_at), beside their arrival.
      const madeAt = made.messages.filter((m) => m.at < back.startedAt).map((m) => m.at - sweep.first);
      outageRows.push([
        c,
        r.whole(during.count),
        `${during.minPerOrg}–${during.maxPerOrg}`,
        madeAt.length === 0 ? 'n/a' : `${seconds(Math.min(...madeAt))} / ${seconds(Math.max(...madeAt))}`,
        first === undefined ? 'n/a' : seconds(first),
        last === undefined ? 'n/a' : seconds(last),
        c === 'e-mail' ? 'outbox' : `${made.requests} for ${made.deliveries}`,
        ratio(during.count, am?.count),
        ratio(first, amFirst),
        ratio(last, amLast),
      ]);
      const subject = `outage ${c}`;
      out.checks.push(
        {
          subject,
          goal: `at most ${GOAL.perOrg} messages per organization during the outage, each organization told`,
          actual: `${during.minPerOrg}–${during.maxPerOrg} per organization, ${during.count} in all`,
          met: during.maxPerOrg <= GOAL.perOrg && during.minPerOrg >= 1 && during.strays === 0,
        },
        r.goal(
          subject,
          'first message after the sweep found the nodes',
          (first ?? NaN) / 1000,
          GOAL.firstS,
          's',
        ),
        r.goal(subject, 'last message of the outage after it', (last ?? NaN) / 1000, GOAL.lastS, 's'),
      );
      const arrived = s.returned.get(c)!;
      const resolves = figures(
        arrived.filter((a) => a.resolved),
        orgs,
      );
      const others = arrived.length - resolves.count;
      const after = (at: number | undefined) => (at === undefined ? 'n/a' : seconds(at - back.lastRecovery));
      returnRows.push([
        c,
        r.whole(arrived.length),
        `${resolves.minPerOrg}–${resolves.maxPerOrg}`,
        r.whole(others),
        after(resolves.first),
        after(resolves.last),
      ]);
      out.checks.push({
        subject,
        goal: `${GOAL.resolvesPerOrg} resolve per organization after the return, nothing else`,
        actual: `${resolves.minPerOrg}–${resolves.maxPerOrg} per organization, ${others} other messages`,
        met: resolves.minPerOrg === 1 && resolves.maxPerOrg === 1 && others === 0,
      });
      const received = during.count + arrived.length;
      if (made.messages.length !== received || made.incidents !== ORGS || made.resolved !== ORGS)
        out.warnings.push(
          `outage ${c}: the incidents API counts ${made.incidents} incidents (${made.resolved} resolved) and ` +
            `${made.messages.length} messages made; ${received} received`,
        );
    }
    if (am !== undefined) {
      const [first, last] = [amFirst, amLast].map((x) => (x === undefined ? 'n/a' : seconds(x)));
      const perOrg = `${am.minPerOrg}–${am.maxPerOrg}`;
      outageRows.push([
        'Alertmanager (anchor)',
        r.whole(am.count),
        perOrg,
        '',
        first!,
        last!,
        '',
        '',
        '',
        '',
      ]);
    }
    r.addTable(
      out,
      `The outage: ${r.whole(NODES)} nodes silent at once. Goals: at most ${GOAL.perOrg} messages per organization ` +
        `per channel, the first within ${GOAL.firstS} s, the last within group_wait + 2 s (${GOAL.lastS} s); ` +
        `waited until ${GROUP_WAIT_S + SETTLE_MS / 1000} s after all nodes were UNREACHABLE and ${QUIET_MS / 1000} s ` +
        'without a message. Made: when the service wrote the message (the incidents API’s created_at); ' +
        'message: when the stand-in had it whole; requests: made for the deliveries of every message of the run',
      'channel | messages | per organization | first / last made (s) | first message (s) | last message (s) | ' +
        'requests for deliveries (whole run) | messages ÷ Alertmanager | first ÷ Alertmanager | last ÷ Alertmanager',
      outageRows,
    );
    const failures = [...s.incidents].filter(([, x]) => x.firstFailure !== undefined);
    if (failures.length > 0)
      out.output.push(
        '\nA delivery that took more than one request, its first request per endpoint (the delivery log): ' +
          failures.map(([c, x]) => `${c}: ${x.firstFailure}`).join('; '),
      );
    r.addTable(
      out,
      `The return: every node reports again (UNREACHABLE → ALIVE). Goal: one resolve per organization per channel; ` +
        'times from the last recovery (the newest ALIVE event’s detected_at)',
      'channel | messages | resolves per organization | other messages | first resolve (s) | last resolve (s)',
      returnRows,
    );
  }
  if (anchor !== undefined && am !== undefined && am.minPerOrg !== 1)
    out.warnings.push(
      `outage: Alertmanager sent ${am.minPerOrg}–${am.maxPerOrg} messages per organization, not 1`,
    );
  return out;
}
