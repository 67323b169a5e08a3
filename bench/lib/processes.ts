// The one way the bench starts a process: its output to a log file, ready when a URL answers 200, its log shows
// a text, or it sends {type: 'ready'} over IPC; stopped with SIGTERM, then SIGKILL after a grace period; killed
// if the runner ends first.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Child {
  pid: number;
  /** The first message of this type (sent at any time); rejects if the child fails or exits first. */
  message<T>(type: string): Promise<T>;
  latest<T>(type: string): T | undefined;
  send(message: object): void;
  stop: () => Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((child) => child.kill('SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const answers200 = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
    async (response) => (await response.arrayBuffer(), response.status === 200),
    () => false,
  );

/** `command` defaults to this Node binary; an IPC channel comes only with ready: 'message'. */
export async function startChild(options: {
  command?: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  logFile: string;
  ready: { url: string } | { logText: string } | 'message';
  stopGraceMs?: number;
}): Promise<Child> {
  const { ready, logFile } = options;
  const log = fs.openSync(logFile, 'w');
  const child = spawn(options.command ?? process.execPath, options.args, {
    cwd: options.cwd ?? PROJECT_ROOT,
    env: options.env,
    stdio: ['ignore', log, log, ...(ready === 'message' ? (['ipc'] as const) : [])],
  });
  fs.closeSync(log);
  running.add(child);
  const received = new Map<string, { type: string; message?: string }>();
  let failure: string | undefined;
  const changed = new Set<() => void>();
  child.on('message', (message: { type: string; message?: string }) => {
    received.set(message.type, message);
    if (message.type === 'failed') failure ??= message.message;
    changed.forEach((check) => check());
  });
  // 'close', not 'exit': a child's last IPC messages may still be on their way when it exits.
  const exited = new Promise<void>((resolve) =>
    child.once('close', (code, signal) => {
      running.delete(child);
      failure ??= `exited (${signal ?? code})`;
      changed.forEach((check) => check());
      resolve();
    }),
  );
  const tail = () => fs.readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
  const error = (why: string) => new Error(`${options.args.at(-1)} (pid ${child.pid}): ${why}\n${tail()}`);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return exited;
    child.kill('SIGTERM');
    const grace = sleep(options.stopGraceMs ?? 15_000, 'late' as const, { ref: false });
    if ((await Promise.race([exited, grace])) === 'late') child.kill('SIGKILL');
    await exited;
  };
  const message = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        if (received.has(type)) resolve(received.get(type) as T);
        else if (failure !== undefined) reject(error(failure));
        else return;
        changed.delete(check);
      };
      changed.add(check);
      check();
    });
  const latest = <T>(type: string) => received.get(type) as T | undefined;
  const handle: Child = { pid: child.pid ?? 0, message, latest, send: (m) => child.send(m), stop };
  const isReady =
    ready === 'message'
      ? async () => received.has('ready')
      : 'url' in ready
        ? () => answers200(ready.url)
        : async () => fs.readFileSync(logFile, 'utf8').includes(ready.logText);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline && failure === undefined;) {
    if (await isReady()) return handle;
    await sleep(ready === 'message' ? 10 : 100);
  }
  await stop();
  throw error(failure ?? 'did not become ready');
}

/** Resident set size of a process in MB (10^6 bytes), from /proc (Linux). */
export function residentMB(pid: number): number {
  const kB = /^VmRSS:\s+(\d+)\s+kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return (Number(kB) * 1024) / 1e6;
}

/** CPU time (user + system, every thread) processes have used so far, in ms; undefined without /proc. */
export function cpuTimeMs(...pids: number[]): number | undefined {
  try {
    return pids.reduce((total, pid) => {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The fields after the command name, which is in parentheses and may itself hold spaces; Linux counts
      // in USER_HZ, which its ABI fixes at 100 ticks a second.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return total + (Number(fields[11]) + Number(fields[12])) * 10;
    }, 0);
  } catch {
    return undefined;
  }
}

/** Stops (SIGSTOP) or resumes (SIGCONT) processes; one already gone is left to its stop to report. */
export function setFrozen(processes: { pid: number }[], frozen: boolean): void {
  for (const { pid } of processes) {
    try {
      process.kill(pid, frozen ? 'SIGSTOP' : 'SIGCONT');
    } catch {
      // Gone already.
    }
  }
}
