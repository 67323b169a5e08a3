// The worker-scaling measurement: the throughput round on PostgreSQL with the API alone in one `serve --role
// api` process and the deliveries in 1, 2 or 4 `worker` processes beside it, which claim them as jobs. Each
// worker count has a fresh database and processes of its own, kept for all of its rounds.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { committedTransactions, createBenchDatabase, vacuumAnalyze } from '../jobs/postgres.js';
import type { WorkersCase } from './cases.js';
import { measureServiceThroughput, type ThroughputRun } from './measure.js';
import type { Receiver } from './receiver.js';
import { progress, whole } from './report.js';
import { seedDatabase } from './seed.js';
import { startService, startWorkers } from './service.js';
import type { NotifySettings } from './section.js';

export interface WorkersRounds {
  case: WorkersCase;
  rounds: ThroughputRun[];
  /** PostgreSQL transactions committed over all the rounds, per notification received. */
  transactionsPerNotification: number;
  seedMs: number;
}

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

/** One worker count after another: only one count's processes are up (and hold connections) at a time. */
export async function measureWorkers(
  cases: WorkersCase[],
  context: WorkersContext,
): Promise<WorkersRounds[]> {
  const results: WorkersRounds[] = [];
  for (const c of cases) results.push(await measureWorkerCount(c, context));
  return results;
}

async function measureWorkerCount(c: WorkersCase, context: WorkersContext): Promise<WorkersRounds> {
  const { settings, logDir } = context;
  const prefix = path.join(logDir, `postgres-workers-${c.workers}`);
  const teardown: (() => Promise<void>)[] = [];
  try {
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
    teardown.push(() => workers.stop());

    const rounds: ThroughputRun[] = [];
    const commitsBefore = await committedTransactions(database.url, database.name);
    for (let round = 1; round <= settings.rounds; round += 1) {
      await vacuumAnalyze(database.url);
      progress(`round ${round}/${settings.rounds}: ${c.name}`);
      rounds.push(
        await measureServiceThroughput(c.name, service, context.receiver, {
          nodes: context.changing,
          round,
          postgres: { url: database.url, name: database.name },
          cpuOf: [
            { label: 'API', pids: [service.pid] },
            { label: c.workers === 1 ? 'worker' : 'workers', pids: workers.pids },
          ],
        }),
      );
    }
    await sleep(STATISTICS_DELAY_MS);
    const commits = (await committedTransactions(database.url, database.name)) - commitsBefore;
    const received = rounds.reduce((sum, run) => sum + run.notifications, 0);
    return { case: c, rounds, transactionsPerNotification: commits / received, seedMs: seeded.ms };
  } finally {
    for (const step of teardown.reverse()) await step();
  }
}
