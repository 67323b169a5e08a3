import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const START_TIMEOUT_MS = 30_000;
export const STOP_TIMEOUT_MS = 20_000;
// Variables of the service that the test runner's own environment must not leak into the child.
const SERVICE_VARIABLES =
  /^(PORT|HOST|DATABASE_URL|PUBLIC_URL|SMTP_URL|SECRET_KEY|BOOTSTRAP_API_KEY|WEBHOOK_ALLOWED_NETWORKS|MAX_WEBHOOKS?_[A-Z_]+|LOG_(LEVEL|REQUESTS)|NODE_(REPORT_INTERVAL|HEARTBEAT_TIMEOUT)_S|JOB_[A-Z_]+|SHUTDOWN_TIMEOUT_MS|EVENT_RETENTION_DAYS|DELIVERY_[A-Z_]+|OTEL_[A-Z_]+)$/;

export interface LogLine {
  msg?: string;
  level?: number;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  reqId?: string;
}

/** The real program in its own process, with only the given service variables. */
export function program(args: string[], env: Record<string, string>): ChildProcess {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !SERVICE_VARIABLES.test(name)),
  );
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: PROJECT_ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs a one-shot command to its end, bounded. */
export async function runToEnd(args: string[], env: Record<string, string>) {
  const child = program(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const code = await bounded(exited, START_TIMEOUT_MS, `end of edgewatch ${args.join(' ')}`);
    return { code, stdout, stderr };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** The real program, `edgewatch serve`, in its own process. */
export class Server {
  readonly lines: LogLine[] = [];
  readonly output: string[] = [];
  readonly exited: Promise<number | null>;
  baseUrl = '';
  private readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();

  /** `serve` by default; `['serve', '--role', 'api']`, `['worker']`, … */
  constructor(env: Record<string, string>, args: string[] = ['serve']) {
    this.child = program(args, { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env });
    let pending = '';
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      for (const text of complete) this.take(text);
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.take(chunk));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    void this.exited.then(() => this.notify());
  }

  private take(text: string): void {
    if (text.trim() === '') return;
    this.output.push(text);
    try {
      this.lines.push(JSON.parse(text) as LogLine);
    } catch {
      // Not a log line (e.g. a start-up failure on stderr): kept in `output` for the failure message.
    }
    this.notify();
  }

  private notify(): void {
    for (const wake of this.waiters) wake();
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves when a log line matches; fails when the process ends first or the time is up. */
  async waitFor(what: string, match: (line: LogLine) => boolean, timeoutMs = START_TIMEOUT_MS) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find(match);
      if (found !== undefined) return found;
      if (!this.running) throw new Error(`exited before ${what}:\n${this.output.join('\n')}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms:\n${this.output.join('\n')}`);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.waiters.add(done);
      });
    }
  }

  /** A worker-only process is up once its worker has started (it serves no HTTP). */
  async workerStarted(): Promise<this> {
    await this.waitFor('worker start', (l) => l.msg === 'job worker started');
    return this;
  }

  async started(): Promise<this> {
    const line = await this.waitFor('listening line', (l) => /^Server listening at http:/.test(l.msg ?? ''));
    this.baseUrl = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line.msg ?? '')![1]!;
    return this;
  }

  /** SIGTERM, then the exit code, bounded. */
  async stop(): Promise<number | null> {
    this.child.kill('SIGTERM');
    return bounded(this.exited, STOP_TIMEOUT_MS, 'exit after SIGTERM');
  }

  kill(): void {
    if (this.running) this.child.kill('SIGKILL');
  }

  fetch(
    path: string,
    key: string | null,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    if (key !== null) headers['x-api-key'] = key;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(this.baseUrl + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
    });
  }

  /** The key printed at first start, if any. */
  printedKeys(): string[] {
    return this.output.flatMap((text) =>
      [...text.matchAll(/Admin API key: (\S+?)(?:\\n|"|\s|$)/g)].map((m) => m[1]!),
    );
  }
}

/** The promise, or a failure naming what did not happen in time. */
export function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
