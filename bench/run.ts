// `npm run bench`: starts each target as its own process on 127.0.0.1, times webhook verification call by call,
// loads each scenario with autocannon, then measures the job queue beside graphile-worker (bench/jobs) and the
// fleet's agent reports and liveness sweep (bench/fleet) and the notifications from a state change to a webhook
// beside an undici floor and Alertmanager (bench/notify), and prints the figures and whether they meet the
// goals. It reports; it does not gate (exit 0 whatever the figures).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { probe, runLoad, type LoadOptions, type LoadRequest, type LoadResult } from './lib/load.js';
import { cpuTimeMs, residentMB } from './lib/processes.js';
import {
  checksList,
  latencyTable,
  resultsTable,
  spoiledWarnings,
  type Check,
  type ScenarioOutcome,
  type SeriesSummary,
} from './lib/report.js';
import { median, percentile } from './lib/stats.js';
import { makeCertificates } from './lib/tls.js';
import { selectJobCases, type JobCase } from './jobs/cases.js';
import { runJobSection, type JobSectionResult, type JobSettings } from './jobs/section.js';
import { selectFleetCases, type FleetCase } from './fleet/cases.js';
import { runFleetSection, type FleetSectionResult, type FleetSettings } from './fleet/section.js';
import { selectNotifyCases, type NotifyCase } from './notify/cases.js';
import { NOTIFY_OPTIONS, notifyOptions, type NotifyOptions } from './notify/options.js';
import { runNotifySection, type NotifySectionResult } from './notify/section.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import {
  SEQUENCES,
  WARM_UP_CALLS,
  type Sequence,
  type SequenceResult,
  type TimedSeries,
} from './sequences.js';
import {
  startNodeOptions,
  TARGETS,
  type BenchSetup,
  type StartedTarget,
  type TargetName,
} from './targets.js';

interface Settings {
  load: LoadOptions;
  warmupSeconds: number;
  /** How long a target sits idle after it is ready before its memory is read. */
  idleSeconds: number;
  rounds: number;
  /** Sequential calls per latency sequence (webhook verify, and as many to its floor). */
  calls: number;
  only: string | undefined;
  /** Node options for the service instead of `npm start`'s: for trying one before changing it there. */
  nodeOptions: string | undefined;
  /** The job-queue section (bench/jobs); its work directory and Node options are the run's. */
  jobs: Omit<JobSettings, 'workDir' | 'nodeOptions'>;
  /** The fleet section (bench/fleet); its work directory and Node options are the run's. */
  fleet: Omit<FleetSettings, 'workDir' | 'nodeOptions'>;
  /** The notification section (bench/notify); its PostgreSQL, work directory, Node options and CA are the run's. */
  notify: NotifyOptions;
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      idle: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '1' },
      calls: { type: 'string', default: '200' },
      only: { type: 'string' },
      'node-options': { type: 'string' },
      jobs: { type: 'string', default: '20000' },
      'job-batch': { type: 'string', default: '500' },
      'job-concurrency': { type: 'string', default: '24' },
      'job-rate': { type: 'string', default: '200' },
      'job-seconds': { type: 'string', default: '10' },
      'job-rounds': { type: 'string', default: '3' },
      'postgres-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      'fleet-nodes': { type: 'string', default: '100000' },
      'fleet-rate': { type: 'string', default: '3333' },
      'fleet-duration': { type: 'string', default: '60' },
      'fleet-warmup': { type: 'string', default: '5' },
      'fleet-change': { type: 'string', default: '1' },
      'fleet-connections': { type: 'string', default: '32' },
      'fleet-sweeps': { type: 'string', default: '3' },
      'fleet-silent': { type: 'string', default: '1' },
      ...NOTIFY_OPTIONS,
    },
  });
  const whole = (name: string, raw: string, min: number) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be a whole number ≥ ${min}`);
    return value;
  };
  const percent = (name: string, raw: string) => {
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0 || value > 100)
      throw new Error(`--${name} must be a percentage > 0`);
    return value;
  };
  return {
    load: {
      connections: whole('connections', values.connections, 1),
      durationSeconds: whole('duration', values.duration, 1),
    },
    warmupSeconds: whole('warmup', values.warmup, 0),
    idleSeconds: whole('idle', values.idle, 0),
    rounds: whole('rounds', values.rounds, 1),
    calls: whole('calls', values.calls, 1),
    only: values.only,
    nodeOptions: values['node-options'],
    jobs: {
      jobs: whole('jobs', values.jobs, 1),
      batch: whole('job-batch', values['job-batch'], 1),
      concurrency: whole('job-concurrency', values['job-concurrency'], 1),
      ratePerSecond: whole('job-rate', values['job-rate'], 1),
      latencySeconds: whole('job-seconds', values['job-seconds'], 1),
      latencyWarmupSeconds: 1,
      rounds: whole('job-rounds', values['job-rounds'], 1),
      postgresUrl: values['postgres-url'],
    },
    fleet: {
      nodes: whole('fleet-nodes', values['fleet-nodes'], 1),
      ratePerSecond: whole('fleet-rate', values['fleet-rate'], 1),
      durationSeconds: whole('fleet-duration', values['fleet-duration'], 1),
      warmupSeconds: whole('fleet-warmup', values['fleet-warmup'], 0),
      changePercent: percent('fleet-change', values['fleet-change']),
      connections: whole('fleet-connections', values['fleet-connections'], 1),
      primeConcurrency: 16,
      sweepRuns: whole('fleet-sweeps', values['fleet-sweeps'], 1),
      silentPercent: percent('fleet-silent', values['fleet-silent']),
      postgresUrl: values['postgres-url'],
    },
    notify: notifyOptions(values),
  };
}

function machine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  const memoryGB = (os.totalmem() / 1e9).toFixed(1);
  return `${os.availableParallelism()} CPUs (${cpu}), ${memoryGB} GB memory, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

/**
 * What to run: everything, or what matches --only, plus the reference if a load scenario is among it (and the
 * graphile-worker anchor of each job measurement among it).
 */
function selected(settings: Settings): {
  scenarios: Scenario[];
  sequences: Sequence[];
  jobCases: JobCase[];
  fleetCases: FleetCase[];
  notifyCases: NotifyCase[];
} {
  const jobCases = selectJobCases(settings.only);
  const fleetCases = selectFleetCases(settings.only);
  const notifyCases = selectNotifyCases(settings.only);
  if (settings.only === undefined)
    return { scenarios: SCENARIOS, sequences: SEQUENCES, jobCases, fleetCases, notifyCases };
  const needle = settings.only.toLowerCase();
  const matches = (name: string) => name.toLowerCase().includes(needle);
  const loads = SCENARIOS.filter((scenario) => scenario.reference !== true && matches(scenario.name));
  return {
    scenarios: loads.length === 0 ? [] : SCENARIOS.filter((s) => s.reference === true || loads.includes(s)),
    sequences: SEQUENCES.filter((sequence) => matches(sequence.name)),
    jobCases,
    fleetCases,
    notifyCases,
  };
}

/** Starts every target the scenarios need, and measures idle memory before any load reaches it. */
async function startTargets(
  names: TargetName[],
  setup: BenchSetup,
  idleSeconds: number,
  started: Map<TargetName, StartedTarget>,
  checks: Check[],
): Promise<void> {
  for (const name of names) {
    const definition = TARGETS[name];
    process.stderr.write(`starting ${name} (${definition.description})\n`);
    const target = await definition.start(setup);
    started.set(name, target);
    if (definition.idleRssLimitMB === undefined) continue;
    await sleep(idleSeconds * 1000);
    const rss = residentMB(target.pid);
    checks.push({
      subject: `${name} idle RSS ${idleSeconds} s after ready`,
      goal: `≤ ${definition.idleRssLimitMB} MB`,
      actual: rss === undefined ? 'n/a (no /proc)' : `${rss.toFixed(1)} MB`,
      met: rss !== undefined && rss <= definition.idleRssLimitMB,
    });
  }
}

interface Measurement {
  load: LoadResult;
  cpuUsPerRequest: number | undefined;
}

/** Loads the target and counts the CPU time its process spent meanwhile. */
async function measureOnce(
  target: StartedTarget,
  request: LoadRequest,
  load: LoadOptions,
): Promise<Measurement> {
  const before = cpuTimeMs(target.pid);
  const result = await runLoad(target.baseUrl, request, load);
  const after = cpuTimeMs(target.pid);
  const cpuUsPerRequest =
    before === undefined || after === undefined || result.total === 0
      ? undefined
      : ((after - before) * 1000) / result.total;
  return { load: result, cpuUsPerRequest };
}

/** Of several rounds, the one with the median throughput, so one disturbed round does not decide. */
function medianRound(results: Measurement[]): Measurement {
  const sorted = [...results].sort((a, b) => a.load.requestsPerSecond - b.load.requestsPerSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (median === undefined) throw new Error('no rounds measured');
  return median;
}

async function measure(
  scenarios: Scenario[],
  started: Map<TargetName, StartedTarget>,
  settings: Settings,
): Promise<Map<Scenario, Measurement>> {
  const prepared = [];
  for (const scenario of scenarios) {
    const target = started.get(scenario.target);
    if (target === undefined) throw new Error(`${scenario.target} was not started`);
    const request = await scenario.prepare(target);
    const first = await probe(target.baseUrl, request);
    if (first.status < 200 || first.status > 299) {
      throw new Error(`${scenario.name}: the first request answered ${first.status}: ${first.text}`);
    }
    prepared.push({ scenario, target, request, rounds: [] as Measurement[] });
  }
  // Rounds interleave the scenarios, so a neighbour's burst of work is shared rather than hitting one.
  for (let round = 1; round <= settings.rounds; round += 1) {
    for (const entry of prepared) {
      process.stderr.write(`  round ${round}/${settings.rounds}: ${entry.scenario.name}\n`);
      if (settings.warmupSeconds > 0) {
        await runLoad(entry.target.baseUrl, entry.request, {
          ...settings.load,
          durationSeconds: settings.warmupSeconds,
        });
      }
      entry.rounds.push(await measureOnce(entry.target, entry.request, settings.load));
    }
  }
  return new Map(prepared.map((entry) => [entry.scenario, medianRound(entry.rounds)]));
}

/** Each sequence in turn, before any load: nothing else the bench does runs meanwhile. */
async function runSequences(
  sequences: Sequence[],
  started: Map<TargetName, StartedTarget>,
  setup: BenchSetup,
  calls: number,
): Promise<Map<Sequence, SequenceResult>> {
  const results = new Map<Sequence, SequenceResult>();
  for (const sequence of sequences) {
    const target = started.get(sequence.target);
    if (target === undefined) throw new Error(`${sequence.target} was not started`);
    process.stderr.write(`  ${sequence.name}: ${calls} sequential calls and ${calls} to its floor\n`);
    results.set(sequence, await sequence.run(target, { calls, certificates: setup.certificates }));
  }
  return results;
}

function summary({ label, durationsMs }: TimedSeries): SeriesSummary {
  return {
    label,
    calls: durationsMs.length,
    medianMs: median(durationsMs),
    p99Ms: percentile(durationsMs, 99),
  };
}

function sequenceCheck(sequence: Sequence, measured: SeriesSummary, floor: SeriesSummary): Check {
  const overhead = measured.medianMs - floor.medianMs;
  return {
    subject: sequence.name,
    goal: `overhead over the floor at the median ≤ ${sequence.goals.maxMedianOverheadMs} ms`,
    actual: `${overhead.toFixed(2)} ms: ${measured.medianMs.toFixed(2)} against ${floor.medianMs.toFixed(2)} ms`,
    met: overhead <= sequence.goals.maxMedianOverheadMs,
  };
}

function goalChecks(scenario: Scenario, outcome: ScenarioOutcome): Check[] {
  const checks: Check[] = [];
  const { minRatio, maxP99Ms } = scenario.goals ?? {};
  if (minRatio !== undefined) {
    checks.push({
      subject: scenario.name,
      goal: `req/s ≥ ${minRatio} × baseline`,
      actual: outcome.ratio === undefined ? 'n/a' : outcome.ratio.toFixed(3),
      met: outcome.ratio !== undefined && outcome.ratio >= minRatio,
    });
  }
  if (maxP99Ms !== undefined) {
    checks.push({
      subject: scenario.name,
      goal: `p99 ≤ ${maxP99Ms} ms`,
      actual: `${outcome.result.p99Ms} ms`,
      met: outcome.result.p99Ms <= maxP99Ms,
    });
  }
  return checks;
}

async function main(): Promise<void> {
  const settings = readSettings();
  const { scenarios, sequences, jobCases, fleetCases, notifyCases } = selected(settings);
  const sections = [scenarios, sequences, jobCases, fleetCases, notifyCases];
  if (sections.every((entries) => entries.length === 0))
    throw new Error(`nothing matches --only ${settings.only}`);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgewatch-bench-'));
  // On every way out, a stop by signal included (the servers are killed then too, see lib/processes.ts).
  process.once('exit', () => fs.rmSync(workDir, { recursive: true, force: true }));
  const setup: BenchSetup = {
    workDir,
    certificates: makeCertificates(path.join(workDir, 'tls')),
    serviceNodeOptions: settings.nodeOptions?.split(/\s+/).filter(Boolean) ?? startNodeOptions(),
  };
  const started = new Map<TargetName, StartedTarget>();
  const checks: Check[] = [];
  let results: Map<Scenario, Measurement>;
  let latencies: Map<Sequence, SequenceResult>;
  try {
    const names = [...new Set([...scenarios, ...sequences].map((entry) => entry.target))];
    await startTargets(names, setup, settings.idleSeconds, started, checks);
    // Sequences first: they leave no data behind, while the load scenarios' data stays until the end.
    latencies = await runSequences(sequences, started, setup, settings.calls);
    results = await measure(scenarios, started, settings);
  } finally {
    await Promise.all([...started.values()].map((target) => target.stop()));
  }
  // After the servers have stopped, so that nothing else runs beside the queues.
  let jobSection: JobSectionResult | undefined;
  if (jobCases.length > 0) {
    process.stderr.write('job queue benchmarks\n');
    jobSection = await runJobSection(jobCases, {
      ...settings.jobs,
      nodeOptions: setup.serviceNodeOptions,
      workDir,
    });
  }
  let fleetSection: FleetSectionResult | undefined;
  if (fleetCases.length > 0) {
    process.stderr.write('fleet benchmarks\n');
    fleetSection = await runFleetSection(fleetCases, {
      ...settings.fleet,
      nodeOptions: setup.serviceNodeOptions,
      workDir,
    });
  }
  let notifySection: NotifySectionResult | undefined;
  if (notifyCases.length > 0) {
    process.stderr.write('notification benchmarks\n');
    notifySection = await runNotifySection(notifyCases, {
      ...settings.notify,
      postgresUrl: settings.jobs.postgresUrl,
      nodeOptions: setup.serviceNodeOptions,
      workDir,
      certificates: setup.certificates,
    });
  }

  const reference = scenarios.find((scenario) => scenario.reference === true);
  const referenceRate = reference === undefined ? undefined : results.get(reference)?.load.requestsPerSecond;
  const outcomes: ScenarioOutcome[] = [];
  for (const scenario of scenarios) {
    const measurement = results.get(scenario);
    if (measurement === undefined) continue;
    const { load: result, cpuUsPerRequest } = measurement;
    const ratio = referenceRate === undefined ? undefined : result.requestsPerSecond / referenceRate;
    const outcome = { name: scenario.name, result, ratio, cpuUsPerRequest };
    outcomes.push(outcome);
    checks.push(...goalChecks(scenario, outcome));
  }

  const latencyRows: SeriesSummary[] = [];
  for (const [sequence, { measured, floor }] of latencies) {
    const [measuredRow, floorRow] = [summary(measured), summary(floor)];
    latencyRows.push(measuredRow, floorRow);
    checks.push(sequenceCheck(sequence, measuredRow, floorRow));
  }
  checks.push(...(jobSection?.checks ?? []));
  checks.push(...(fleetSection?.checks ?? []));
  checks.push(...(notifySection?.checks ?? []));

  const { connections, durationSeconds } = settings.load;
  console.log(`\nedgewatch benchmarks on ${machine()}`);
  if (started.has('service')) {
    const command = ['node', ...setup.serviceNodeOptions, 'dist/main.js serve'].join(' ');
    const source = settings.nodeOptions === undefined ? 'as npm start' : 'options from --node-options';
    console.log(`service: ${command} (${source})`);
  }
  if (outcomes.length > 0) {
    console.log(
      `${connections} connections, ${durationSeconds} s per scenario after a ${settings.warmupSeconds} s warm-up, ` +
        `${settings.rounds === 1 ? 'one round' : `median of ${settings.rounds} rounds`}, ` +
        'servers logging at info to a file\n',
    );
    console.log(resultsTable(outcomes));
    console.log('');
  }
  if (latencyRows.length > 0) {
    console.log(
      `One call at a time after ${WARM_UP_CALLS} untimed ones, each call to the service beside one to its floor:\n`,
    );
    console.log(latencyTable(latencyRows));
    console.log('');
  }
  for (const section of [jobSection, fleetSection, notifySection]) {
    if (section === undefined) continue;
    for (const line of section.output) console.log(line);
    console.log('');
  }
  console.log(checksList(checks));
  for (const warning of spoiledWarnings(outcomes)) console.log(warning);
  for (const warning of jobSection?.warnings ?? []) console.log(warning);
  for (const warning of fleetSection?.warnings ?? []) console.log(warning);
  for (const warning of notifySection?.warnings ?? []) console.log(warning);
}

try {
  await main();
} catch (error) {
  // A run that could not measure is not a result: say why and fail, unlike a missed goal.
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
