import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ChildServer {
  pid: number;
  baseUrl: string;
  logFile: string;
  stop(): Promise<void>;
}

export interface ChildServerOptions {
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  port: number;
  /** Where the child's stdout and stderr (its pino log) go. */
  logFile: string;
  /** A path that answers 200 once the server can take load. */
  readyPath: string;
  readyTimeoutMs?: number;
}

const running = new Set<ChildProcess>();

// A runner that ends early, or is stopped, must not leave servers behind on their ports.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

/** A port the kernel considers free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address === null || typeof address === 'string') reject(new Error('no port assigned'));
        else resolve(address.port);
      });
    });
  });
}

/** Starts `node <args>` and resolves once `readyPath` answers 200. */
export async function startChildServer(options: ChildServerOptions): Promise<ChildServer> {
  const baseUrl = `http://127.0.0.1:${options.port}`;
  const started = await startLogged(options, 5_000, () => answers200(baseUrl + options.readyPath));
  return { ...started, baseUrl };
}

export interface ChildProcessOptions {
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
  /** Text its log shows once the process can take work (it listens on no port to ask). */
  readyText: string;
  readyTimeoutMs?: number;
  /** How long a SIGTERM has before SIGKILL. */
  stopGraceMs?: number;
}

/** Starts `node <args>` that listens on no port (a worker) and resolves once its log shows `readyText`. */
export async function startChildProcess(options: ChildProcessOptions): Promise<Omit<ChildServer, 'baseUrl'>> {
  return startLogged(options, options.stopGraceMs ?? 10_000, () =>
    fs.readFileSync(options.logFile, 'utf8').includes(options.readyText),
  );
}

/**
 * Starts `node <args>` with its output in `logFile`, kept in `running` until it exits, and polls `ready`
 * until it says yes; a child that exits first or is not ready in time is stopped, and its log's end shown.
 */
async function startLogged(
  options: { args: string[]; cwd: string; env: NodeJS.ProcessEnv; logFile: string; readyTimeoutMs?: number },
  stopGraceMs: number,
  ready: () => boolean | Promise<boolean>,
): Promise<Omit<ChildServer, 'baseUrl'>> {
  const log = fs.openSync(options.logFile, 'w');
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  const { stop } = trackChild(child, running, stopGraceMs);
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    if (child.pid !== undefined && (await ready())) return { pid: child.pid, logFile: options.logFile, stop };
    await sleep(100);
  }
  await stop();
  throw new Error(`${options.args.join(' ')} did not become ready; its log:\n${tail(options.logFile)}`);
}

async function answers200(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Resident set size of a process in MB (10^6 bytes), from /proc (Linux); undefined elsewhere. */
export function residentMB(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return match?.[1] === undefined ? undefined : (Number(match[1]) * 1024) / 1e6;
  } catch {
    return undefined;
  }
}

// Linux reports /proc times in USER_HZ, which its ABI fixes at 100 ticks per second.
const MS_PER_TICK = 10;

/** CPU time (user + system, every thread) a process has used so far, in ms; undefined without /proc. */
export function cpuTimeMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    return Number.isFinite(user) && Number.isFinite(system) ? (user + system) * MS_PER_TICK : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time (ms) several processes have used so far, together; undefined if one cannot be read. */
export function cpuTimeMsOf(pids: number[]): number | undefined {
  let total = 0;
  for (const pid of pids) {
    const ms = cpuTimeMs(pid);
    if (ms === undefined) return undefined;
    total += ms;
  }
  return total;
}

/**
 * Keeps a spawned child in `running` until it exits, and gives the way to stop it: SIGTERM, then SIGKILL
 * if it is still there after `graceMs`.
 */
export function trackChild(
  child: ChildProcess,
  running: Set<ChildProcess>,
  graceMs: number,
): { exited: Promise<void>; stop: () => Promise<void> } {
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const result = await Promise.race([exited, sleep(graceMs, 'timeout' as const, { ref: false })]);
    if (result === 'timeout') child.kill('SIGKILL');
    await exited;
  };
  return { exited, stop };
}
