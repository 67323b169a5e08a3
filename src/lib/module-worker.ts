import { Worker } from 'node:worker_threads';

/**
 * A worker thread running `moduleUrl`, a module of this program given as `import.meta.url`-relative URL of
 * its built `.js`. From the sources (tests, `tsx`) that module is TypeScript, and the thread loads it through
 * tsx, as the main thread was.
 */
export function moduleWorker(moduleUrl: URL, workerData: unknown): Worker {
  const source = moduleUrl.href.replace(/\.js$/, '.ts');
  if (!import.meta.url.endsWith('.ts')) return new Worker(moduleUrl, { workerData });
  const load = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(load, { eval: true, workerData });
}
