// The service as the fleet measurements run it: on SQLite one `serve` process (API and worker together); on
// PostgreSQL `serve --role api` processes and one `serve --role worker`, all on the same database.
import fs from 'node:fs';
import path from 'node:path';
import { freePort, startChildProcess, startChildServer } from '../lib/processes.js';
import { childEnv, PROJECT_ROOT } from '../targets.js';
import type { FleetDatabase } from './cases.js';

export interface FleetProcess {
  label: string;
  pid: number;
  logFile: string;
  stop(): Promise<void>;
}

export interface FleetServers {
  /** Where reports go, one per API process; the load takes them in turn. */
  baseUrls: string[];
  processes: FleetProcess[];
  stop(): Promise<void>;
}

export interface FleetServerOptions {
  database: FleetDatabase;
  /** DATABASE_URL of the seeded database. */
  databaseUrl: string;
  secretKey: string;
  apiProcesses: number;
  nodeOptions: string[];
  logDir: string;
  /** Settings of the service beyond the database's, as environment variables. */
  env: Record<string, string>;
}

function serviceMain(): string {
  const main = path.join(PROJECT_ROOT, 'dist', 'main.js');
  if (!fs.existsSync(main)) throw new Error('dist/main.js is missing: run `npm run build` first.');
  return main;
}

/** `serve --role worker` listens on no port: it is ready once its log says the worker started. */
async function startWorkerRole(options: FleetServerOptions, env: NodeJS.ProcessEnv): Promise<FleetProcess> {
  const worker = await startChildProcess({
    args: [...options.nodeOptions, serviceMain(), 'serve', '--role', 'worker'],
    cwd: PROJECT_ROOT,
    env,
    logFile: path.join(options.logDir, `${options.database}-worker.log`),
    readyText: 'job worker started',
  });
  return { label: 'worker process', ...worker };
}

export async function startFleetServers(options: FleetServerOptions): Promise<FleetServers> {
  const main = serviceMain();
  const env = (port?: number) =>
    childEnv({
      ...options.env,
      DATABASE_URL: options.databaseUrl,
      SECRET_KEY: options.secretKey,
      ...(port === undefined ? {} : { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }),
    });
  const processes: FleetProcess[] = [];
  const baseUrls: string[] = [];
  const stop = async () => {
    await Promise.all(processes.map((process) => process.stop()));
  };
  try {
    if (options.database === 'sqlite') {
      const port = await freePort();
      const server = await startChildServer({
        args: [...options.nodeOptions, main, 'serve'],
        cwd: PROJECT_ROOT,
        env: env(port),
        port,
        logFile: path.join(options.logDir, 'sqlite-service.log'),
        readyPath: '/readyz',
      });
      processes.push({ label: 'service process (API and worker)', ...server });
      baseUrls.push(server.baseUrl);
    } else {
      processes.push(await startWorkerRole(options, env()));
      for (let n = 1; n <= options.apiProcesses; n += 1) {
        const port = await freePort();
        const server = await startChildServer({
          args: [...options.nodeOptions, main, 'serve', '--role', 'api'],
          cwd: PROJECT_ROOT,
          env: env(port),
          port,
          logFile: path.join(options.logDir, `postgres-api-${n}.log`),
          readyPath: '/readyz',
        });
        processes.push({ label: `API process ${n}`, ...server });
        baseUrls.push(server.baseUrl);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { baseUrls, processes, stop };
}
