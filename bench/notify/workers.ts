// The worker-scaling measurement: the throughput round on PostgreSQL with the API alone in one `serve --role
// api` process and the deliveries in 1, 2 or 4 `worker` processes beside it, which claim them as jobs. Each
// worker count has a fresh database and processes of its own, kept for all of its rounds, which alternate
// with the other counts'.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  committedTransactions,
  connectionsInUse,
  createBenchDatabase,
  vacuumAnalyze,
} from '../jobs/postgres.js';
import type { WorkersCase } from './cases.js';
import { measureServiceThroughput, type ThroughputRun } from './measure.js';
import type { Receiver } from './receiver.js';
import { progress, whole } from './report.js';
import { seedDatabase } from './seed.js';
import { startService, startWorkers, type ServiceUnderTest, type WorkerProcesses } from './service.js';
import type { NotifySettings } from './section.js';

export interface WorkersRounds {
  case: WorkersCase;
  /** The uncounted first round; its duplicates still count. */
  warmUp: ThroughputRun;
  rounds: ThroughputRun[];
  /** PostgreSQL transactions committed over all the rounds, per notification received. */
  transactionsPerNotification: number;
  seedMs: number;
}

/** Free connections below which a round warns that the server may refuse the active deployment's. */
const LOW_CONNECTIONS = 15;

/** Backends report their statistics up to a second after they go idle. */
const STATISTICS_DELAY_MS = 1_500;

export interface WorkersContext {
  receiver: Receiver;
  /** The secret the receiver signs challenges with and checks signatures with. */
  secret: string;
  settings: NotifySettings;
  logDir: string;
  /** Nodes seeded into each database. */
  nodes: number;
  /** The nodes that change once a round. */
  changing: number[];
}

/** A worker count's database and processes, kept for all of its rounds. */
interface Deployment {
  case: WorkersCase;
  database: { url: string; name: string };
  service: ServiceUnderTest;
  workers: WorkerProcesses;
  seedMs: number;
}

/**
 * Every count is deployed (its own database, API and workers) and warmed up first; then the counted rounds
 * take the counts in turn, starting with a different one each round, and the counts not measuring are
 * frozen (SIGSTOP: no CPU, no statements; their connections stay open and idle). The machine's speed
 * drifts over minutes by more than the differences measured here, so a ratio is read from rounds that
 * alternate, not from one count's rounds after another's.
 */
export async function measureWorkers(
  cases: WorkersCase[],
  context: WorkersContext,
): Promise<WorkersRounds[]> {
  const teardown: (() => Promise<void>)[] = [];
  try {
    const deployed: { deployment: Deployment; warmUp: ThroughputRun }[] = [];
    for (const c of cases) {
      const deployment = await deploy(c, context, teardown);
      const warmUp = await measureRound(deployment, context, 1, 'warm-up round');
      setFrozen(deployment, true);
      deployed.push({ deployment, warmUp });
    }
    await sleep(STATISTICS_DELAY_MS);
    const commitsBefore = await Promise.all(
      deployed.map(({ deployment: d }) => committedTransactions(d.database.url, d.database.name)),
    );
    const rounds = deployed.map((): ThroughputRun[] => []);
    const { settings } = context;
    for (let n = 1; n <= settings.rounds; n += 1) {
      for (let k = 0; k < deployed.length; k += 1) {
        const index = (n - 1 + k) % deployed.length;
        const { deployment } = deployed[index]!;
        setFrozen(deployment, false);
        rounds[index]!.push(await measureRound(deployment, context, n + 1, `round ${n}/${settings.rounds}`));
        setFrozen(deployment, true);
      }
    }
    await sleep(STATISTICS_DELAY_MS);
    return await Promise.all(
      deployed.map(async ({ deployment: d, warmUp }, index) => {
        const commits =
          (await committedTransactions(d.database.url, d.database.name)) - commitsBefore[index]!;
        const counted = rounds[index]!;
        const received = counted.reduce((sum, run) => sum + run.notifications, 0);
        return {
          case: d.case,
          warmUp,
          rounds: counted,
          transactionsPerNotification: commits / received,
          seedMs: d.seedMs,
        };
      }),
    );
  } finally {
    for (const step of teardown.reverse()) await step();
  }
}

/** A fresh database with the seed, its API process and its workers; what undoes each is added to teardown. */
async function deploy(
  c: WorkersCase,
  context: WorkersContext,
  teardown: (() => Promise<void>)[],
): Promise<Deployment> {
  const { settings, logDir } = context;
  const prefix = path.join(logDir, `postgres-workers-${c.workers}`);
  const database = await createBenchDatabase(settings.postgresUrl);
  teardown.push(() => database.drop());
  progress(`seeding ${whole(context.nodes)} nodes into ${database.name}`);
  const seeded = await seedDatabase(database.url, context.nodes);
  const service = await startService({
    database: seeded,
    certificates: settings.certificates,
    hookUrl: context.receiver.hookUrl,
    hookSecret: context.secret,
    concurrency: settings.concurrency,
    nodeOptions: settings.nodeOptions,
    logFile: `${prefix}-api.log`,
    role: 'api',
  });
  teardown.push(() => service.stop());
  const workers = await startWorkers(service, c.workers, {
    nodeOptions: settings.nodeOptions,
    logFile: (n) => `${prefix}-worker-${n}.log`,
  });
  const deployment = { case: c, database, service, workers, seedMs: seeded.ms };
  // A frozen process would not see the signal that stops it.
  teardown.push(async () => {
    setFrozen(deployment, false);
    await workers.stop();
  });
  return deployment;
}

/** Stops (SIGSTOP) or resumes (SIGCONT) every process of a deployment. */
function setFrozen(deployment: Deployment, frozen: boolean): void {
  for (const pid of [deployment.service.pid, ...deployment.workers.pids]) {
    try {
      process.kill(pid, frozen ? 'SIGSTOP' : 'SIGCONT');
    } catch {
      // Gone already: its stop reports why.
    }
  }
}

/** One throughput round of a deployment, after a vacuum; `flip` sets the state the reports move to. */
async function measureRound(
  d: Deployment,
  context: WorkersContext,
  flip: number,
  label: string,
): Promise<ThroughputRun> {
  await vacuumAnalyze(d.database.url);
  progress(`${label}: ${d.case.name}`);
  // The frozen deployments keep their pools' connections: near the server's limit, a round would fail.
  const connections = await connectionsInUse(d.database.url);
  if (connections.max - connections.used < LOW_CONNECTIONS) {
    progress(`warning: PostgreSQL has ${connections.used} of ${connections.max} connections in use`);
  }
  return measureServiceThroughput(d.case.name, d.service, context.receiver, {
    nodes: context.changing,
    round: flip,
    postgres: d.database,
    cpuOf: [
      { label: 'API', pids: [d.service.pid] },
      { label: d.case.workers === 1 ? 'worker' : 'workers', pids: d.workers.pids },
    ],
  });
}
