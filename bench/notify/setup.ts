// What the section needs before it measures: whether PostgreSQL answers, whether Alertmanager is installed,
// and a seeded database with the service running on it for each database a case needs.
import path from 'node:path';
import { redactUrl } from '../../src/observability/logger.js';
import { createBenchDatabase, probePostgres, type BenchDatabase } from '../jobs/postgres.js';
import type { Check } from '../lib/report.js';
import { findAlertmanager, type AlertmanagerBinary } from './alertmanager.js';
import { DATABASE_LABEL, type NotifyCase, type NotifyDatabase } from './cases.js';
import type { PostgresHandle } from './measure.js';
import type { Receiver } from './receiver.js';
import { progress, whole } from './report.js';
import { seedDatabase } from './seed.js';
import { startService, type ServiceUnderTest } from './service.js';
import type { NotifySettings } from './section.js';

export interface Runnable {
  cases: NotifyCase[];
  /** SKIP lines for the cases left out. */
  skipped: Check[];
  /** What the output says of PostgreSQL, when a case wanted it. */
  postgresLine: string | undefined;
}

/** The cases that can run: without the PostgreSQL ones when the server does not answer. */
export async function runnableCases(cases: NotifyCase[], postgresUrl: string): Promise<Runnable> {
  if (!cases.some((c) => c.database === 'postgres')) return { cases, skipped: [], postgresLine: undefined };
  const shownUrl = redactUrl(postgresUrl);
  const server = await probePostgres(postgresUrl);
  if ('error' in server) {
    progress(`PostgreSQL did not answer (${server.error}): skipping the PostgreSQL notification figures`);
    return {
      cases: cases.filter((c) => c.database !== 'postgres'),
      skipped: cases
        .filter((c) => c.database === 'postgres')
        .map((c) => ({
          subject: c.name,
          goal: '',
          actual: 'not measured: PostgreSQL did not answer',
          met: false,
          skipped: true,
        })),
      postgresLine: `PostgreSQL at ${shownUrl} did not answer (${server.error}): its notification figures are skipped.`,
    };
  }
  const s = server.settings;
  return {
    cases,
    skipped: [],
    postgresLine:
      `PostgreSQL ${server.version} at ${shownUrl} (autovacuum ${s.autovacuum}, synchronous_commit ` +
      `${s.synchronous_commit}, fsync ${s.fsync}); a fresh database for the run, analysed after the seed and ` +
      'vacuumed before each throughput round, dropped afterwards',
  };
}

/** The installed Alertmanager and the line the output says of it; only looked for when it would run. */
export function alertmanagerAnchor(batch: number): { binary: AlertmanagerBinary | undefined; line: string } {
  const binary = findAlertmanager();
  if (binary === undefined) {
    progress('Alertmanager is not installed: skipping its anchor');
    return {
      binary,
      line:
        'Alertmanager: skipped: neither prometheus-alertmanager nor alertmanager is on PATH ' +
        '(Debian: apt-get install prometheus-alertmanager); its anchor and the checks against it are not measured.',
    };
  }
  return {
    binary,
    line:
      `Alertmanager: ${binary.version} (${path.basename(binary.path)}), a fresh process per round without ` +
      "cluster, group_by ['...'] (no grouping), group_wait 0s, group_interval 1s, repeat_interval 1m, one " +
      "webhook receiver to the same endpoint (ca_file: the bench's CA); the changes POSTed to /api/v2/alerts " +
      `${batch} alerts a request, one request at a time; every alert received counts, several may share a request`,
  };
}

export interface RunningService {
  service: ServiceUnderTest;
  postgres: PostgresHandle | undefined;
}

export interface Services {
  running: Map<NotifyDatabase, RunningService>;
  /** How long each seed took, for the output. */
  seedTimes: string[];
  /** Stops the services and drops the PostgreSQL database. */
  close(): Promise<void>;
}

/** For each database a case needs: a fresh database, `nodes` nodes seeded into it, and the service on it. */
export async function startServices(
  cases: NotifyCase[],
  nodes: number,
  receiver: Receiver,
  secret: string,
  settings: NotifySettings,
  logDir: string,
): Promise<Services> {
  const running = new Map<NotifyDatabase, RunningService>();
  const seedTimes: string[] = [];
  let database: BenchDatabase | undefined;
  const close = async () => {
    await Promise.all([...running.values()].map(({ service }) => service.stop()));
    await database?.drop();
  };
  try {
    for (const kind of ['sqlite', 'postgres'] as const) {
      if (!cases.some((c) => c.database === kind)) continue;
      let url = `sqlite:${path.join(logDir, 'sqlite', 'edgewatch.db')}`;
      let postgres: PostgresHandle | undefined;
      if (kind === 'postgres') {
        database = await createBenchDatabase(settings.postgresUrl);
        postgres = { url: database.url, name: database.name };
        url = database.url;
      }
      progress(`seeding ${whole(nodes)} nodes into ${postgres?.name ?? 'SQLite'}`);
      const seeded = await seedDatabase(url, nodes);
      seedTimes.push(`${DATABASE_LABEL[kind]} ${(seeded.ms / 1000).toFixed(1)} s`);
      const service = await startService({
        database: seeded,
        certificates: settings.certificates,
        hookUrl: receiver.hookUrl,
        hookSecret: secret,
        concurrency: settings.concurrency,
        nodeOptions: settings.nodeOptions,
        logFile: path.join(logDir, `${kind}-service.log`),
      });
      running.set(kind, { service, postgres });
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { running, seedTimes, close };
}
