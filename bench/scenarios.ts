// The HTTP section: closed-loop load (autocannon) on the service (`serve` on SQLite, as `npm start` runs it)
// and on bare Fastify (the baseline, anchor of every ratio), each a process of its own.
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

function service(name: string, goals: Scenario['goals'], prepare: Scenario['prepare']): Scenario {
  return { name, target: 'service', prepare, goals, anchors: [BASELINE] };
}

type Body = (n: number) => object;
/** POSTs `body(n)` for n = 1 … `count` to `post`, then checks `list` holds exactly that many; returns `list`. */
async function createListed(api: AdminApi, count: number, post: string, list: string, body: Body) {
  for (let n = 1; n <= count; n += 1) await api.call('POST', post, body(n));
  const answer = await api.call('GET', list);
  // A paged list answers {total_count, results}; the webhook list is a bare array.
  const found = (Array.isArray(answer) ? answer : answer.results).length;
  if (found !== count) throw new Error(`expected ${count} items in ${list}, found ${found}`);
  return list;
}

export const SCENARIOS: Scenario[] = [
  { name: BASELINE, anchor: true, target: 'baseline', prepare: () => '/api/v2/role' },
  service('GET /api/v2/role, authenticated', { minRatio: 0.6, maxP99Ms: 5 }, () => '/api/v2/role'),
  service('GET /api/v2/webhook, 3 webhooks', { minRatio: 0.5 }, (api) => {
    const hook = (n: number) => ({ name: `hook ${n}`, url: `https://hooks.example.com/${n}` });
    return createListed(api, 3, '/api/v1/webhook', '/api/v2/webhook', hook);
  }),
  service('GET /api/v2/mysubscriptions, 50 alerts', { minRatio: 0.4, maxP99Ms: 10 }, async (api) => {
    const settings = { org_id: (await api.call('GET', '/api/v1/user/me')).org_id, alert_me: 'UNREACHABLE' };
    const alert = (n: number) => ({ name: `alert ${n}`, type: 'NODE_STATE_CHANGE', settings });
    // All fifty on one page, as the figure has always measured (the default page holds 25).
    return createListed(api, 50, '/api/v1/mysubscriptions', '/api/v2/mysubscriptions?size=50', alert);
  }),
];

async function startTarget(target: Scenario['target'], s: Common, adminKey: string): Promise<Service> {
  process.stderr.write(`starting ${target}\n`);
  const logFile = path.join(s.workDir, `${target}.log`);
  const env = { DATABASE_URL: `sqlite:${path.join(s.workDir, 'edgewatch.db')}`, BOOTSTRAP_API_KEY: adminKey };
  if (target === 'service') return startService({ nodeOptions: s.nodeOptions, logFile, env });
  // The baseline logs with the service's own logger, at the same level, to a file too.
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const args = ['--import', 'tsx', path.join(PROJECT_ROOT, 'bench/baseline-server.ts')];
  const ready = { url: `${baseUrl}/api/v2/role` };
  return { baseUrl, ...(await startChild({ args, env: childEnv({ PORT: String(port) }), logFile, ready })) };
}

/** `pid`: the server's process, whose CPU time counts. */
type Loaded = { scenario: Scenario; pid: number; url: string; headers: Record<string, string> };
/** `connections` clients, each sending its next request when the last one was answered. */
async function load({ pid, url, headers }: Loaded, seconds: number) {
  const cpuBefore = cpuTimeMs(pid);
  const result = await autocannon({ url, headers, connections: num('connections'), duration: seconds });
  const cpuMs = (cpuTimeMs(pid) ?? NaN) - (cpuBefore ?? NaN);
  return { result, cpuUs: (cpuMs * 1000) / result.requests.total };
}

export async function runHttpSection(scenarios: Scenario[], s: Common): Promise<r.SectionResult> {
  const [seconds, warmup, idle, rounds] = [num('duration'), num('warmup', 0), num('idle', 0), num('rounds')];
  const out = r.emptyResult();
  const adminKey = `ew_bench_${randomBytes(32).toString('base64url')}`;
  const targets = new Map<Scenario['target'], Service>();
  const prepared: Loaded[] = [];
  const measured = new r.Rounds<Awaited<ReturnType<typeof load>>>((x) => x.result.requests.average);
  try {
    // The baseline first, as the scenarios list it; the service's idle memory once it has started.
    for (const target of new Set(scenarios.map((c) => c.target)))
      targets.set(target, await startTarget(target, s, adminKey));
    await sleep(idle * 1000);
    const rss = residentMB(targets.get('service')!.pid);
    const [subject, goal] = [`service idle RSS ${idle} s after ready`, `≤ ${IDLE_RSS_LIMIT_MB} MB`];
    out.checks.push({ subject, goal, actual: `${rss.toFixed(1)} MB`, met: rss <= IDLE_RSS_LIMIT_MB });
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
  const baseline = measured.median(BASELINE)?.result.requests.average ?? NaN;
  const rows = scenarios.map(({ name, goals }) => {
    const { result, cpuUs } = measured.median(name)!;
    const { requests, latency } = result;
    const ratio = requests.average / baseline;
    if (goals?.minRatio) out.checks.push(r.goal(name, 'req/s ÷ baseline', ratio, goals.minRatio, '×', false));
    // autocannon records latencies in whole milliseconds.
    if (goals?.maxP99Ms) out.checks.push(r.goal(name, 'p99', latency.p99, goals.maxP99Ms, 'ms'));
    // Answers outside 2xx, connection errors and timeouts: any of these spoils the figures.
    const spoiled = result.non2xx + result.errors + result.timeouts;
    if (spoiled > 0) out.warnings.push(`${name}: ${spoiled} non-2xx answers or errors of ${requests.total}`);
    const cells = [requests.average, latency.p50, latency.p99].map(r.whole);
    return [name, ...cells, r.fixed(ratio, 2), r.whole(cpuUs)];
  });
  out.output.push(
    `service: ${['node', ...s.nodeOptions, 'dist/main.js serve'].join(' ')}`,
    `${num('connections')} connections, ${seconds} s per scenario after a ${warmup} s warm-up, median of ` +
      `${rounds} round(s), servers logging at info to a file\n`,
    r.table('scenario | req/s | p50 (ms) | p99 (ms) | ratio to baseline | server CPU per request (µs)', rows),
  );
  return out;
}
