// The HTTP section: closed-loop load (autocannon) against the service (`serve` on SQLite, as `npm start` runs
// it) and against bare Fastify (the baseline, anchor of every ratio), each its own process; the service's idle
// memory first, then every scenario, rounds taking turns, each row its median round.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import type { AdminApi } from './lib/api.js';
import { num, type Common } from './lib/options.js';
import { cpuTimeMs, freePort, PROJECT_ROOT, residentMB, startChild } from './lib/processes.js';
import * as r from './lib/report.js';
import { childEnv, startService, stopAll, type Service } from './lib/service.js';

export interface Scenario extends r.Case {
  target: 'baseline' | 'service';
  /** Runs once against the started target (creates data through the API) and returns the path to load. */
  prepare(api: AdminApi): Promise<string> | string;
  goals?: { minRatio?: number; maxP99Ms?: number };
}

const BASELINE = 'baseline: bare Fastify, constant JSON';
const IDLE_RSS_LIMIT_MB = 120;

/** Creates `count` of something through the API, then checks the list holds exactly that many. */
type Create = (n: number) => [string, unknown];

async function createListed(api: AdminApi, count: number, list: string, create: Create) {
  for (let n = 1; n <= count; n += 1) await api.call('POST', ...create(n));
  const answer = await api.call('GET', list);
  // A paged list answers {total_count, results}; the webhook list is a bare array.
  const found = (Array.isArray(answer) ? answer : answer.results).length;
  if (found !== count) throw new Error(`expected ${count} items in ${list}, found ${found}`);
  return list;
}

export const SCENARIOS = (
  [
    { name: BASELINE, anchor: true as const, target: 'baseline', prepare: () => '/api/v2/role' },
    {
      name: 'GET /api/v2/role, authenticated',
      target: 'service',
      prepare: () => '/api/v2/role',
      goals: { minRatio: 0.6, maxP99Ms: 5 },
    },
    {
      name: 'GET /api/v2/webhook, 3 webhooks',
      target: 'service',
      prepare: (api) =>
        createListed(api, 3, '/api/v2/webhook', (n) => [
          '/api/v1/webhook',
          { name: `hook ${n}`, url: `https://hooks.example.com/${n}` },
        ]),
      goals: { minRatio: 0.5 },
    },
    {
      name: 'GET /api/v2/mysubscriptions, 50 alerts',
      target: 'service',
      async prepare(api) {
        const { org_id } = await api.call('GET', '/api/v1/user/me');
        // All fifty on one page, as the figure has always measured (the default page holds 25).
        return createListed(api, 50, '/api/v2/mysubscriptions?size=50', (n) => [
          '/api/v1/mysubscriptions',
          { name: `alert ${n}`, type: 'NODE_STATE_CHANGE', settings: { org_id, alert_me: 'UNREACHABLE' } },
        ]);
      },
      goals: { minRatio: 0.4, maxP99Ms: 10 },
    },
  ] satisfies Scenario[]
).map((s): Scenario => (s.anchor ? s : { ...s, anchors: [BASELINE] }));

async function startTarget(target: Scenario['target'], s: Common, adminKey: string): Promise<Service> {
  process.stderr.write(`starting ${target}\n`);
  const logFile = path.join(s.workDir, `${target}.log`);
  const database = `sqlite:${path.join(s.workDir, 'edgewatch.db')}`;
  const serviceEnv = { DATABASE_URL: database, BOOTSTRAP_API_KEY: adminKey };
  if (target === 'service') return startService({ nodeOptions: s.nodeOptions, logFile, env: serviceEnv });
  // The baseline logs with the service's own logger, at the same level, to a file too.
  const baseUrl = `http://127.0.0.1:${await freePort()}`;
  const args = ['--import', 'tsx', path.join(PROJECT_ROOT, 'bench/baseline-server.ts')];
  const env = childEnv({ PORT: baseUrl.split(':')[2]! });
  return { baseUrl, ...(await startChild({ args, env, logFile, ready: { url: `${baseUrl}/api/v2/role` } })) };
}

/** `pid`: the server's process, whose CPU time counts. */
type Loaded = { scenario: Scenario; pid: number; url: string; headers: Record<string, string> };

/** `connections` clients, each sending its next request when the last one was answered. */
async function load({ pid, url, headers }: Loaded, seconds: number) {
  const cpuBefore = cpuTimeMs(pid);
  const result = await autocannon({ url, headers, connections: num('connections'), duration: seconds });
  const cpuMs = (cpuTimeMs(pid) ?? NaN) - (cpuBefore ?? NaN);
  return {
    requestsPerSecond: result.requests.average,
    /** Whole milliseconds, as autocannon records them. */
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    cpuUs: (cpuMs * 1000) / result.requests.total,
    /** Answers outside 2xx, connection errors and timeouts: any of these spoils the figures. */
    spoiled: result.non2xx + result.errors + result.timeouts,
  };
}

export async function runHttpSection(scenarios: Scenario[], s: Common): Promise<r.SectionResult> {
  const [seconds, warmup, idle, rounds] = [num('duration'), num('warmup', 0), num('idle', 0), num('rounds')];
  const out = r.emptyResult();
  const adminKey = `ew_bench_${randomBytes(32).toString('base64url')}`;
  const targets = new Map<Scenario['target'], Service>();
  const prepared: Loaded[] = [];
  const measured = new r.Rounds<Awaited<ReturnType<typeof load>>>((x) => x.requestsPerSecond);
  try {
    for (const target of ['baseline', 'service'] as const) {
      if (!scenarios.some((c) => c.target === target)) continue;
      const started = await startTarget(target, s, adminKey);
      targets.set(target, started);
      if (target !== 'service') continue;
      await sleep(idle * 1000);
      const rss = residentMB(started.pid);
      out.checks.push({
        subject: `service idle RSS ${idle} s after ready`,
        goal: `≤ ${IDLE_RSS_LIMIT_MB} MB`,
        actual: `${rss.toFixed(1)} MB`,
        met: rss <= IDLE_RSS_LIMIT_MB,
      });
    }
    for (const scenario of scenarios) {
      const target = targets.get(scenario.target)!;
      const headers: Record<string, string> = scenario.target === 'service' ? { 'x-api-key': adminKey } : {};
      const url = target.baseUrl! + (await scenario.prepare(target.api!));
      const first = await fetch(url, { headers });
      const answered = `${scenario.name}: the first request answered ${first.status}`;
      if (!first.ok) throw new Error(`${answered}: ${await first.text()}`);
      prepared.push({ scenario, pid: target.pid, url, headers });
    }
    // Rounds interleave the scenarios, so a neighbour's burst of work is shared rather than hitting one.
    for (let round = 1; round <= rounds; round += 1)
      for (const entry of prepared) {
        r.progress(`round ${round}/${rounds}: ${entry.scenario.name}`);
        if (warmup > 0) await load(entry, warmup);
        measured.add(entry.scenario.name, await load(entry, seconds));
      }
  } finally {
    await stopAll([...targets.values()]);
  }
  const baseline = measured.median(BASELINE)?.requestsPerSecond ?? NaN;
  const rows = prepared.map(({ scenario }) => {
    const result = measured.median(scenario.name)!;
    const ratio = result.requestsPerSecond / baseline;
    const { minRatio, maxP99Ms } = scenario.goals ?? {};
    if (minRatio !== undefined)
      out.checks.push(r.goal(scenario.name, 'req/s ÷ baseline', ratio, minRatio, '×', false));
    if (maxP99Ms !== undefined) out.checks.push(r.goal(scenario.name, 'p99', result.p99Ms, maxP99Ms, 'ms'));
    if (result.spoiled > 0)
      out.warnings.push(`${scenario.name}: ${result.spoiled} non-2xx answers or errors of ${result.total}`);
    const cells = [result.requestsPerSecond, result.p50Ms, result.p99Ms].map(r.whole);
    return [scenario.name, ...cells, r.fixed(ratio, 2), r.whole(result.cpuUs)];
  });
  if (targets.has('service'))
    out.output.push(`service: ${['node', ...s.nodeOptions, 'dist/main.js serve'].join(' ')}`);
  if (rows.length > 0)
    out.output.push(
      `${num('connections')} connections, ${seconds} s per scenario after a ${warmup} s warm-up, median of ` +
        `${rounds} round(s), servers logging at info to a file\n`,
      r.table(
        'scenario | req/s | p50 (ms) | p99 (ms) | ratio to baseline | server CPU per request (µs)',
        rows,
      ),
    );
  return out;
}
