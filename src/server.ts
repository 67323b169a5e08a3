import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { announceBootstrap, bootstrap } from './features/bootstrap/service.js';
import type { App } from './http/types.js';
import { closeContext, openContext } from './runtime.js';
import { createBackground, type Background } from './background.js';
import { startTracing } from './observability/tracing-sdk.js';

/** What one process runs: the API, the worker, or both (the default, and the only choice on SQLite). */
export type Role = 'all' | 'api' | 'worker';
export const ROLES: readonly Role[] = ['all', 'api', 'worker'];

export interface RunningServer {
  app: App | undefined;
  address: string | undefined;
  close(): Promise<void>;
}

export class RoleError extends Error {}

/** The oldest Node.js line edgewatch supports (docs/decisions/0009-node-24.md); older ones run, warned. */
export const SUPPORTED_NODE_MAJOR = 22;

function warnOfRuntime(logger: Logger): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= SUPPORTED_NODE_MAJOR) return;
  logger.warn(
    { node: process.version },
    `Node.js ${major} is past its end of life and not supported: edgewatch runs on it for now, but ` +
      `supports Node.js ${SUPPORTED_NODE_MAJOR} and later, and recommends 24.`,
  );
}

/**
 * `edgewatch serve`: the HTTP API and the job worker of one process. On the embedded SQLite database one
 * process does both (its single writer is in that process); on PostgreSQL any number of `api` and `worker`
 * processes share one database, and `api` processes only enqueue.
 */
export async function serve(config: Config, logger: Logger, role: Role = 'all'): Promise<RunningServer> {
  if (role !== 'all' && config.database.kind === 'sqlite') {
    throw new RoleError(
      `--role ${role} needs PostgreSQL: on the embedded SQLite database one process runs the API and the ` +
        'worker together. Leave out --role, or set DATABASE_URL to a postgres:// URL.',
    );
  }
  warnOfRuntime(logger);
  const tracing = config.tracing === undefined ? undefined : await startTracing(config.tracing, logger);
  const ctx = await openContext(config, logger).catch(async (error: unknown) => {
    await tracing?.stop();
    throw error;
  });
  announceBootstrap(ctx, await bootstrap(ctx, { presetKey: config.bootstrapApiKey }));
  let background: Background | undefined;
  let app: App | undefined;
  let address: string | undefined;
  try {
    if (role !== 'api') {
      background = createBackground(ctx);
      await background.start();
    }
    if (role !== 'worker') {
      app = await buildApp(ctx);
      address = await app.listen({ port: config.port, host: config.host });
    }
  } catch (error) {
    await background?.stop(config.shutdownTimeoutMs);
    await closeContext(ctx);
    await tracing?.stop();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    app,
    address,
    close() {
      // Stop accepting requests and let those in flight finish; stop claiming jobs and deliveries and let running ones
      // finish (up to the deadline, then their leases go back); then release the database.
      closing ??= Promise.all([app?.close(), background?.stop(config.shutdownTimeoutMs)])
        .then(() => closeContext(ctx))
        .then(() => tracing?.stop());
      return closing;
    },
  };
}
