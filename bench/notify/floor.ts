// The runner's side of the undici floor (floor-process.ts): started per round, told to go, and waited for.
import { fork, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PROJECT_ROOT } from '../targets.js';

/** Passed as JSON in BENCH_NOTIFY_FLOOR. */
export interface FloorSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  count: number;
  concurrency: number;
  /** Of each request's X-Service-Delivery, so that every round's ids are its own. */
  prefix: string;
}

export type FloorMessage =
  { type: 'ready' } | { type: 'done'; failed: number; cpuMs: number } | { type: 'failed'; message: string };

export interface FloorOptions {
  url: string;
  secret: string;
  body: string;
  count: number;
  concurrency: number;
  prefix: string;
  caFile: string;
  nodeOptions: string[];
  logFile: string;
}

export interface FloorProcess {
  pid: number;
  /** Tells the process to start; resolves when it has sent everything. */
  go(): Promise<{ failed: number; cpuMs: number }>;
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** The headers the service sends with a notification, signed once: the floor does not sign per request. */
function signedHeaders(secret: string, body: string): Record<string, string> {
  const timestamp = String(Date.now());
  const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
  return {
    'content-type': 'application/json',
    'user-agent': 'undici-floor',
    'x-service-timestamp': timestamp,
    'x-service-signature': `v1=${signature}`,
  };
}

export async function startFloor(options: FloorOptions): Promise<FloorProcess> {
  const spec: FloorSpec = {
    url: options.url,
    headers: signedHeaders(options.secret, options.body),
    body: options.body,
    count: options.count,
    concurrency: options.concurrency,
    prefix: options.prefix,
  };
  const log = fs.openSync(options.logFile, 'w');
  const { PATH, HOME, TMPDIR } = process.env;
  const child = fork(path.join(PROJECT_ROOT, 'bench', 'notify', 'floor-process.ts'), [], {
    cwd: PROJECT_ROOT,
    execArgv: [...options.nodeOptions, '--import', 'tsx'],
    // The CA is trusted the way the service trusts it.
    env: {
      PATH,
      HOME,
      TMPDIR,
      NODE_EXTRA_CA_CERTS: options.caFile,
      BENCH_NOTIFY_FLOOR: JSON.stringify(spec),
    },
    stdio: ['ignore', log, log, 'ipc'],
  });
  fs.closeSync(log);
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  const next = () =>
    new Promise<FloorMessage>((resolve, reject) => {
      const onExit = () => reject(new Error(`the floor process exited early; see ${options.logFile}`));
      child.once('exit', onExit);
      child.once('message', (message) => {
        child.removeListener('exit', onExit);
        resolve(message as FloorMessage);
      });
    });
  const ready = await next();
  if (ready.type !== 'ready' || child.pid === undefined) throw new Error('the floor process did not start');
  const pid = child.pid;
  return {
    pid,
    async go() {
      const answer = next();
      child.send({ type: 'go' });
      const message = await answer;
      if (message.type === 'failed') throw new Error(`the floor process failed: ${message.message}`);
      if (message.type !== 'done') throw new Error('the floor process answered out of turn');
      return { failed: message.failed, cpuMs: message.cpuMs };
    },
    async close() {
      await Promise.race([exited, sleep(2_000, undefined, { ref: false })]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
