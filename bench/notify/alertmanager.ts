// Prometheus Alertmanager as the section's second anchor, when its binary is installed (Debian's package
// names it prometheus-alertmanager; upstream's is alertmanager): started directly, per round, with a
// configuration of its own in the run's directory and no cluster, and given the same state changes as alerts.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { freePort, trackChild } from '../lib/processes.js';
import { nodeName, TUNNEL } from './seed.js';

const BINARIES = ['prometheus-alertmanager', 'alertmanager'];
const READY_TIMEOUT_MS = 30_000;

export interface AlertmanagerBinary {
  path: string;
  /** The first line of `--version`. */
  version: string;
}

/** The installed binary on PATH, if any. */
export function findAlertmanager(): AlertmanagerBinary | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const name of BINARIES) {
      const candidate = path.join(dir, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
      } catch {
        continue;
      }
      const output = execFileSync(candidate, ['--version'], { encoding: 'utf8', stdio: 'pipe' });
      return { path: candidate, version: output.split('\n')[0]?.trim() ?? 'unknown version' };
    }
  }
  return undefined;
}

/**
 * Every alert its own group (`group_by: ['...']`), sent at once (`group_wait: 0s`); the intervals only matter
 * for alerts that join a group already notified, or repeat, which none does within a round. No resolved
 * notifications: the process is stopped with its alerts still firing.
 */
export function alertmanagerConfig(receiverUrl: string, caFile: string): string {
  return [
    'route:',
    '  receiver: bench',
    "  group_by: ['...']",
    '  group_wait: 0s',
    '  group_interval: 1s',
    '  repeat_interval: 1m',
    'receivers:',
    '  - name: bench',
    '    webhook_configs:',
    `      - url: '${receiverUrl}'`,
    '        send_resolved: false',
    '        http_config:',
    '          tls_config:',
    `            ca_file: '${caFile}'`,
    '',
  ].join('\n');
}

export interface RunningAlertmanager {
  pid: number;
  baseUrl: string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startAlertmanager(
  binary: AlertmanagerBinary,
  options: { dir: string; receiverUrl: string; caFile: string },
): Promise<RunningAlertmanager> {
  fs.mkdirSync(path.join(options.dir, 'data'), { recursive: true });
  const configFile = path.join(options.dir, 'alertmanager.yml');
  fs.writeFileSync(configFile, alertmanagerConfig(options.receiverUrl, options.caFile));
  const port = await freePort();
  const logFile = path.join(options.dir, 'alertmanager.log');
  const log = fs.openSync(logFile, 'w');
  const child = spawn(
    binary.path,
    [
      `--config.file=${configFile}`,
      `--storage.path=${path.join(options.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // No peers: an empty address turns the cluster (and its settling wait) off.
      '--cluster.listen-address=',
    ],
    { cwd: options.dir, stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  const { stop } = trackChild(child, running, 5_000);
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline && child.exitCode === null && child.pid !== undefined) {
    const ready = await fetch(`${baseUrl}/-/ready`, { signal: AbortSignal.timeout(1_000) }).then(
      async (response) => (await response.arrayBuffer(), response.ok),
      () => false,
    );
    if (ready) return { pid: child.pid, baseUrl, stop };
    await sleep(100);
  }
  await stop();
  throw new Error(
    `Alertmanager did not become ready; its log:\n${fs.readFileSync(logFile, 'utf8').slice(-2_000)}`,
  );
}

/** The state changes of a round as alerts, one per node, told apart by their labels; `batch` to a request body. */
export function alertBatches(count: number, round: number, batch: number): string[] {
  const alerts = Array.from({ length: count }, (_, i) => ({
    labels: {
      alertname: 'TunnelStateChange',
      round: String(round),
      node: nodeName(i),
      tunnel: TUNNEL.key,
      state: 'TERMINATED',
    },
    annotations: { summary: `Tunnel ${TUNNEL.name} on ${nodeName(i)} is TERMINATED (was CONNECTED).` },
  }));
  const bodies: string[] = [];
  for (let first = 0; first < count; first += batch)
    bodies.push(JSON.stringify(alerts.slice(first, first + batch)));
  return bodies;
}

/** POST /api/v2/alerts, one request at a time; each must answer 200. Returns when the first was sent. */
export async function postAlerts(baseUrl: string, bodies: readonly string[]): Promise<number> {
  const pool = new Pool(baseUrl, { connections: 1 });
  const startedAt = performance.now();
  try {
    for (const body of bodies) {
      const response = await pool.request({
        method: 'POST',
        path: '/api/v2/alerts',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200)
        throw new Error(`Alertmanager answered ${response.statusCode}: ${text.slice(0, 300)}`);
    }
  } finally {
    await pool.close();
  }
  return startedAt;
}
