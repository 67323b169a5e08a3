import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdminApi } from './lib/api.js';
import { freePort, startChildServer, type ChildServer } from './lib/processes.js';
import type { BenchCertificates } from './lib/tls.js';

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

export type TargetName = 'baseline' | 'service';

/** What the runner settles once, before any target starts. */
export interface BenchSetup {
  workDir: string;
  /** The throwaway CA the service trusts (NODE_EXTRA_CA_CERTS) and the local webhook endpoint's certificate. */
  certificates: BenchCertificates;
  /** The Node options the service runs with: `npm start`'s, unless --node-options replaces them. */
  serviceNodeOptions: string[];
}

/** A server under load, started as its own process so the load generator does not share its event loop. */
export interface StartedTarget extends ChildServer {
  /** An Admin API key (the service only). */
  adminKey?: string;
  /** The API as that admin (the service only); closed when the target stops. */
  api?: AdminApi;
}

export interface TargetDefinition {
  description: string;
  start(setup: BenchSetup): Promise<StartedTarget>;
  /** Idle resident memory the target should stay under, measured a few seconds after it is ready. */
  idleRssLimitMB?: number;
}

// Only what the process needs: a stray DATABASE_URL or SMTP_URL in the caller's shell must not leak in.
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { PATH, HOME, TMPDIR } = process.env;
  return { PATH, HOME, TMPDIR, LOG_LEVEL: 'info', HOST: '127.0.0.1', ...extra };
}

/**
 * The Node options `npm start` runs the service with, so the bench measures what is deployed. bin/edgewatch.js
 * must name the same ones in its shebang; a drift between the two stops the run.
 */
export function startNodeOptions(): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string | undefined>;
  };
  const start = manifest.scripts.start ?? '';
  const fromStart = /^node((?:\s+--\S+)*)\s+dist\/main\.js serve$/.exec(start);
  if (fromStart === null)
    throw new Error(`package.json "start" is not \`node [options] dist/main.js serve\`: ${start}`);
  const options = (fromStart[1] ?? '').trim();
  const shebang =
    fs.readFileSync(path.join(PROJECT_ROOT, 'bin', 'edgewatch.js'), 'utf8').split('\n')[0] ?? '';
  const fromBin = /^#!\/usr\/bin\/env(?: -S)? node(.*)$/.exec(shebang)?.[1]?.trim();
  if (fromBin !== options) {
    throw new Error(`bin/edgewatch.js runs node with "${fromBin ?? shebang}", npm start with "${options}"`);
  }
  return options === '' ? [] : options.split(/\s+/);
}

export const TARGETS: Record<TargetName, TargetDefinition> = {
  baseline: {
    description: 'bare Fastify, constant JSON, same logger',
    async start({ workDir }) {
      const port = await freePort();
      return startChildServer({
        args: ['--import', 'tsx', path.join('bench', 'baseline-server.ts')],
        cwd: PROJECT_ROOT,
        env: childEnv({ PORT: String(port) }),
        port,
        logFile: path.join(workDir, 'baseline.log'),
        readyPath: '/api/v2/role',
      });
    },
  },
  service: {
    description: 'edgewatch serve on embedded SQLite, started as `npm start` starts it',
    idleRssLimitMB: 120,
    async start({ workDir, certificates, serviceNodeOptions }) {
      const main = path.join(PROJECT_ROOT, 'dist', 'main.js');
      if (!fs.existsSync(main)) throw new Error('dist/main.js is missing: run `npm run build` first.');
      const port = await freePort();
      const adminKey = 'ew_bench_' + randomBytes(32).toString('base64url');
      const server = await startChildServer({
        args: [...serviceNodeOptions, main, 'serve'],
        cwd: PROJECT_ROOT,
        env: childEnv({
          PORT: String(port),
          DATABASE_URL: `sqlite:${path.join(workDir, 'service', 'edgewatch.db')}`,
          BOOTSTRAP_API_KEY: adminKey,
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          // The webhook scenarios call an endpoint on this machine, with a certificate from the bench's own CA.
          NODE_EXTRA_CA_CERTS: certificates.caFile,
          WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
        }),
        port,
        logFile: path.join(workDir, 'service.log'),
        readyPath: '/readyz',
      });
      const api = new AdminApi(server.baseUrl, adminKey);
      return {
        ...server,
        adminKey,
        api,
        stop: async () => {
          await api.close();
          await server.stop();
        },
      };
    },
  },
};
