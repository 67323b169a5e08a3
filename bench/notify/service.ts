// The service as the section runs it: one `serve` process (API and worker together, on either database), as
// `npm start` starts it, or on PostgreSQL the API alone beside `worker` processes; with one webhook to the
// local receiver, verified, and one alert: TUNNEL_STATE_CHANGE on the root organization, channel webhook.
import fs from 'node:fs';
import path from 'node:path';
import { AdminApi } from '../lib/api.js';
import { freePort, startChildProcess, startChildServer } from '../lib/processes.js';
import type { BenchCertificates } from '../lib/tls.js';
import { childEnv, PROJECT_ROOT } from '../targets.js';
import type { SeededDatabase } from './seed.js';

/**
 * Far beyond the section's length: the seeded nodes report once a round at most, and a sweep that found them
 * silent would add NODE_STATE_CHANGE events and headless checks to the measurements.
 */
export const HEARTBEAT_TIMEOUT_S = 3_600;

export interface ServiceUnderTest {
  pid: number;
  baseUrl: string;
  api: AdminApi;
  logFile: string;
  /** The environment it runs with, for worker processes to share. */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  database: SeededDatabase;
  certificates: BenchCertificates;
  hookUrl: string;
  /** The secret the receiver signs challenges with and checks signatures with. */
  hookSecret: string;
  concurrency: number;
  nodeOptions: string[];
  logFile: string;
  /** `api`: the HTTP API alone (PostgreSQL), its deliveries left as jobs for worker processes. */
  role?: 'api';
}

export function serviceEnv(options: ServiceOptions, port: number): Record<string, string> {
  return {
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: options.database.url,
    SECRET_KEY: options.database.secretKey,
    BOOTSTRAP_API_KEY: options.database.adminKey,
    NODE_EXTRA_CA_CERTS: options.certificates.caFile,
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    NODE_HEARTBEAT_TIMEOUT_S: String(HEARTBEAT_TIMEOUT_S),
    DELIVERY_CONCURRENCY_PER_WEBHOOK: String(options.concurrency),
  };
}

function serviceMain(): string {
  const main = path.join(PROJECT_ROOT, 'dist', 'main.js');
  if (!fs.existsSync(main)) throw new Error('dist/main.js is missing: run `npm run build` first.');
  return main;
}

export async function startService(options: ServiceOptions): Promise<ServiceUnderTest> {
  const port = await freePort();
  const env = childEnv(serviceEnv(options, port));
  const role = options.role === undefined ? [] : ['--role', options.role];
  const server = await startChildServer({
    args: [...options.nodeOptions, serviceMain(), 'serve', ...role],
    cwd: PROJECT_ROOT,
    env,
    port,
    logFile: options.logFile,
    readyPath: '/readyz',
  });
  const api = new AdminApi(server.baseUrl, options.database.adminKey);
  const stop = async () => {
    await api.close();
    await server.stop();
  };
  try {
    const me = await api.call('GET', '/api/v1/user/me');
    const hook = await api.call('POST', '/api/v1/webhook', {
      name: 'Bench receiver',
      url: options.hookUrl,
      secret: options.hookSecret,
    });
    const verified = await api.call('POST', `/api/v1/webhook/${hook.id}/verify`, {});
    if (verified.status !== 'SUCCESS')
      throw new Error(`the webhook was not verified: ${JSON.stringify(verified)}`);
    await api.call('POST', '/api/v1/mysubscriptions', {
      name: 'Every tunnel',
      type: 'TUNNEL_STATE_CHANGE',
      settings: { org_id: me.org_id },
      channel_type: 'webhook',
      channel_id: hook.id,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { pid: server.pid, baseUrl: server.baseUrl, api, logFile: server.logFile, env, stop };
}

export interface WorkerProcesses {
  pids: number[];
  stop(): Promise<void>;
}

/** `count` `worker` processes with the service's environment, started together; ready once each says so. */
export async function startWorkers(
  service: ServiceUnderTest,
  count: number,
  options: { nodeOptions: string[]; logFile: (n: number) => string },
): Promise<WorkerProcesses> {
  const started = await Promise.allSettled(
    Array.from({ length: count }, (_, i) =>
      startChildProcess({
        args: [...options.nodeOptions, serviceMain(), 'worker'],
        cwd: PROJECT_ROOT,
        env: service.env,
        logFile: options.logFile(i + 1),
        readyText: '"msg":"job worker started"',
      }),
    ),
  );
  const workers = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const stop = async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
  };
  const failure = started.find((result) => result.status === 'rejected');
  if (failure !== undefined) {
    await stop();
    throw failure.reason;
  }
  return { pids: workers.map((worker) => worker.pid), stop };
}

/** Notifications the service has not yet recorded as delivered (or otherwise settled). */
export async function pendingNotifications(api: AdminApi): Promise<number> {
  const page = await api.call('GET', '/api/v2/notification?status=pending&size=1');
  return Number(page.total_count);
}
