import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChildServer, type ChildServer } from './lib/processes.js';

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

export type TargetName = 'baseline' | 'service';

/** A server under load, started as its own process so the load generator does not share its event loop. */
export interface StartedTarget extends ChildServer {
  /** An Admin API key (the service only). */
  adminKey?: string;
}

export interface TargetDefinition {
  description: string;
  start(workDir: string): Promise<StartedTarget>;
  /** Idle resident memory the target should stay under, measured a few seconds after it is ready. */
  idleRssLimitMB?: number;
}

// Only what the process needs: a stray DATABASE_URL or SMTP_URL in the caller's shell must not leak in.
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { PATH, HOME, TMPDIR } = process.env;
  return { PATH, HOME, TMPDIR, LOG_LEVEL: 'info', HOST: '127.0.0.1', ...extra };
}

export const TARGETS: Record<TargetName, TargetDefinition> = {
  baseline: {
    description: 'bare Fastify, constant JSON, same logger',
    async start(workDir) {
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
    description: 'edgewatch serve on embedded SQLite',
    idleRssLimitMB: 120,
    async start(workDir) {
      const main = path.join(PROJECT_ROOT, 'dist', 'main.js');
      if (!fs.existsSync(main)) throw new Error('dist/main.js is missing: run `npm run build` first.');
      const port = await freePort();
      const adminKey = 'ew_bench_' + randomBytes(32).toString('base64url');
      const server = await startChildServer({
        args: [main, 'serve'],
        cwd: PROJECT_ROOT,
        env: childEnv({
          PORT: String(port),
          DATABASE_URL: `sqlite:${path.join(workDir, 'service', 'edgewatch.db')}`,
          BOOTSTRAP_API_KEY: adminKey,
          PUBLIC_URL: `http://127.0.0.1:${port}`,
        }),
        port,
        logFile: path.join(workDir, 'service.log'),
        readyPath: '/readyz',
      });
      return { ...server, adminKey };
    },
  },
};
