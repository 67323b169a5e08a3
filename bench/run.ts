// `npm run bench`: each section in turn, every server under test a process of its own on 127.0.0.1; then the
// figures and one PASS/MISS line per goal. It reports; it does not gate: exit 0 whatever the figures, 1 when
// it could not measure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NODE_LIST_CASES, runNodeListSection } from './fleet/node-list.js';
import { FLEET_CASES, runFleetSection } from './fleet/section.js';
import { JOB_CASES, runJobSection } from './jobs/section.js';
import { nodeOptionsFlag, only, postgresUrl, type Common } from './lib/options.js';
import { checksList, select, type Case, type RunSection, type SectionResult } from './lib/report.js';
import { startNodeOptions } from './lib/service.js';
import { makeCertificates } from './lib/tls.js';
import { runNotifySection } from './notify/section.js';
import { NOTIFY_CASES } from './notify/service.js';
import { OUTAGE_CASES, runOutageSection } from './outage/section.js';
import { runHttpSection, SCENARIOS } from './scenarios.js';
import { runSoakSection, SOAK_CASES } from './soak/section.js';

const section = <C extends Case>(name: string, cases: C[], run: RunSection<C>) => {
  const picked = select(cases, only);
  return { name, count: picked.length, run: (common: Common) => run(picked, common) };
};

async function main(): Promise<void> {
  const sections = [
    section('HTTP', SCENARIOS, runHttpSection),
    section('job queue', JOB_CASES, runJobSection),
    section('fleet', FLEET_CASES, runFleetSection),
    section('node list', NODE_LIST_CASES, runNodeListSection),
    section('notification', NOTIFY_CASES, runNotifySection),
    section('soak', SOAK_CASES, runSoakSection),
    section('mass outage', OUTAGE_CASES, runOutageSection),
  ].filter(({ count }) => count > 0);
  if (sections.length === 0) throw new Error(`nothing matches --only ${only}`);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgewatch-bench-'));
  // On every way out, a stop by signal included (the processes are killed then too, see lib/processes.ts).
  process.once('exit', () => fs.rmSync(workDir, { recursive: true, force: true }));
  const certificates = makeCertificates(path.join(workDir, 'tls'));
  const common = { workDir, nodeOptions: nodeOptionsFlag ?? startNodeOptions(), postgresUrl, certificates };
  const results: SectionResult[] = [];
  // One after the other, each once the last one's processes have stopped: nothing else runs beside it.
  for (const { name, run } of sections) {
    process.stderr.write(`${name} benchmarks\n`);
    results.push(await run(common));
  }
  const cpu = `${os.availableParallelism()} CPUs (${os.cpus()[0]?.model.trim()})`;
  const machine = `${cpu}, ${(os.totalmem() / 1e9).toFixed(1)} GB memory, Node ${process.version}, ${os.release()}`;
  console.log(`\nedgewatch benchmarks on ${machine}`);
  for (const { output } of results) console.log(`${output.join('\n')}\n`);
  console.log(checksList(results.flatMap((result) => result.checks)));
  for (const warning of results.flatMap((result) => result.warnings)) console.log(`warning: ${warning}`);
}

try {
  await main();
} catch (error) {
  // A run that could not measure is not a result: say why and fail, unlike a missed goal.
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
