import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PROJECT_ROOT } from '../targets.js';
import type { ChildMessage, ParentMessage, WorkerProcessSpec, WorkerReport } from './protocol.js';

/** A worker process of the job benchmarks (bench/jobs/worker-process.ts), driven over its IPC channel. */
export interface WorkerProcess {
  pid: number;
  /** Runs so far, as the process last reported (every 20 ms while it runs jobs). */
  runs(): number;
  /** Resolves when the process has started its worker. */
  started: Promise<void>;
  /** Resolves with the process's report: after "stop", or by itself on SQLite. */
  report: Promise<WorkerReport>;
  send(message: ParentMessage): void;
  /** Waits a moment for the process to exit by itself (it does after its report), then kills it. */
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface WorkerProcessOptions {
  /** Node options for the process (the runner passes the service's, for both queues). */
  nodeOptions: string[];
  logFile: string;
  env?: Record<string, string>;
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Starts a worker process and resolves once it has opened its queue and waits for "go". */
export async function startWorkerProcess(
  spec: WorkerProcessSpec,
  options: WorkerProcessOptions,
): Promise<WorkerProcess> {
  const log = fs.openSync(options.logFile, 'w');
  const { PATH, HOME, TMPDIR } = process.env;
  const child = fork(path.join(PROJECT_ROOT, 'bench', 'jobs', 'worker-process.ts'), [], {
    cwd: PROJECT_ROOT,
    execArgv: [...options.nodeOptions, '--import', 'tsx'],
    // Only what the process needs, as for the servers: nothing of the caller's shell leaks in.
    env: { PATH, HOME, TMPDIR, LOG_LEVEL: 'info', ...options.env, BENCH_JOB_PROCESS: JSON.stringify(spec) },
    stdio: ['ignore', log, log, 'ipc'],
  });
  fs.closeSync(log);
  running.add(child);

  let runs = 0;
  let resolveReady: () => void = () => undefined;
  let resolveStarted: () => void = () => undefined;
  let resolveReport: (report: WorkerReport) => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    fail = reject;
  });
  const failures: ((error: Error) => void)[] = [(error) => fail(error)];
  const started = new Promise<void>((resolve, reject) => {
    resolveStarted = resolve;
    failures.push(reject);
  });
  const report = new Promise<WorkerReport>((resolve, reject) => {
    resolveReport = resolve;
    failures.push(reject);
  });
  // Whoever waits on one of these hears of a failure; the others must not count as unhandled.
  started.catch(() => undefined);
  report.catch(() => undefined);
  let settled = false;
  const failAll = (message: string) => {
    if (settled) return;
    settled = true;
    const error = new Error(
      `${spec.queue} worker process ${child.pid}: ${message}\n${tail(options.logFile)}`,
    );
    for (const reject of failures) reject(error);
  };

  child.on('message', (raw) => {
    const message = raw as ChildMessage;
    switch (message.type) {
      case 'ready':
        resolveReady();
        break;
      case 'started':
        resolveStarted();
        break;
      case 'progress':
        runs = message.runs;
        break;
      case 'report':
        runs = message.report.runs;
        settled = true;
        resolveReport(message.report);
        break;
      case 'failed':
        failAll(`failed: ${message.message}`);
        break;
    }
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      failAll(`exited (${signal ?? code}) before it reported`);
      resolve();
    }),
  );

  await ready;
  if (child.pid === undefined) throw new Error('the worker process has no pid');
  return {
    pid: child.pid,
    runs: () => runs,
    started,
    report,
    send: (message) => child.send(message),
    close: async () => {
      if (!settled) child.kill('SIGKILL');
      await Promise.race([exited, sleep(2_000, undefined, { ref: false })]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
