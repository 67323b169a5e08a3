import { existsSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { App } from './types.js';

/** Where `vite build` writes the console: dist/console at the project root, from src/http and dist/http. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../dist/console', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

// Vite names every file under assets/ by its content hash, so a changed file is a new URL.
const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface ConsoleOptions {
  /** The built console; CONSOLE_DIR unless a test points elsewhere. */
  root?: string;
}

/**
 * The web console at `/`: the files `vite build` left, one route each (found at start), so any other path
 * still gets the API's own 404. The hooks here are encapsulated: /api and /docs keep their own headers.
 */
export async function consoleRoutes(app: App, options: ConsoleOptions = {}): Promise<void> {
  const root = options.root ?? CONSOLE_DIR;
  if (!existsSync(join(root, 'index.html'))) {
    app.log.warn(
      'The web console is not built (no dist/console/index.html); run `npm run build` to serve it at /.',
    );
    return;
  }
  const assets = join(root, 'assets') + sep;
  app.addHook('onRequest', (_request, reply, done) => {
    void reply.headers(SECURITY_HEADERS);
    done();
  });
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    schemaHide: true,
    decorateReply: false,
    cacheControl: false,
    setHeaders: (reply, path) => {
      void reply.header('cache-control', path.startsWith(assets) ? IMMUTABLE : 'no-cache');
    },
  });
}
