import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { announceBootstrap, bootstrap } from './features/bootstrap/service.js';
import type { App } from './http/types.js';
import { closeContext, openContext } from './runtime.js';

export interface RunningServer {
  app: App;
  address: string;
  close(): Promise<void>;
}

/** `edgewatch serve`: the API and the worker role (e-mail retries) in one process. */
export async function serve(config: Config, logger: Logger): Promise<RunningServer> {
  const ctx = await openContext(config, logger);
  announceBootstrap(ctx, await bootstrap(ctx, { presetKey: config.bootstrapApiKey }));
  const app = await buildApp(ctx);
  ctx.mailer.start();
  const address = await app.listen({ port: config.port, host: config.host });
  let closing: Promise<void> | undefined;
  return {
    app,
    address,
    close() {
      // Stop accepting, let in-flight requests finish, then release the database.
      closing ??= app.close().then(() => closeContext(ctx));
      return closing;
    },
  };
}
