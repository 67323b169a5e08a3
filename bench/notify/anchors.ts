// The throughput's two anchors, timed as the service is: the floor, the same signed body POSTed by a bare
// undici loop (floor-process.ts); and Alertmanager, when installed, a fresh process per round.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Pool } from 'undici';
import { freePort, PROJECT_ROOT, startChild, type Child } from '../lib/processes.js';
import type { Receiver } from '../lib/receiver.js';
import { progress } from '../lib/report.js';
import { childEnv } from '../lib/service.js';
import { processMeter, timeBurst, type Send } from './measure.js';
import { nodeName, TUNNEL } from './seed.js';

export const FLOOR = 'notify floor: undici POST loop';
export const ALERTMANAGER = 'notify anchor: Alertmanager';

interface Anchor {
  name: string;
  count: number;
  round: number;
  logDir: string;
  caFile: string;
}

async function timed(a: Anchor, receiver: Receiver, child: Child, send: Send) {
  progress(`round ${a.round}: ${a.name}`);
  const meters = [processMeter('Alertmanager', [child])];
  return timeBurst(a.name, receiver, a.count, meters, send).finally(child.stop);
}

/** `concurrency` in flight over as many kept-alive connections: the service's per-webhook limit. */
type FloorSettings = { secret: string; concurrency: number; nodeOptions: string[] };

export async function measureFloor(a: Anchor, receiver: Receiver, s: FloorSettings) {
  const body = receiver.sample;
  if (body === undefined) throw new Error('no notification of the service to take the floor body from');
  // The headers the service sends with a notification, signed once: the floor does not sign per request.
  const timestamp = String(Date.now());
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'undici-floor',
    'x-service-timestamp': timestamp,
    'x-service-signature': `v1=${createHmac('sha256', s.secret).update(`${timestamp}.${body}`).digest('hex')}`,
  };
  const { count, round } = a;
  const spec = { url: receiver.url('/hook'), body, headers, count, round, concurrency: s.concurrency };
  const floor = await startChild({
    args: [...s.nodeOptions, '--import', 'tsx', path.join(PROJECT_ROOT, 'bench/notify/floor-process.ts')],
    // The CA is trusted the way the service trusts it.
    env: childEnv({ NODE_EXTRA_CA_CERTS: a.caFile, BENCH_NOTIFY_FLOOR: JSON.stringify(spec) }),
    logFile: path.join(a.logDir, `floor-${round}.log`),
    ready: 'message',
  });
  return timed(a, receiver, floor, async () => {
    floor.send({ type: 'go' });
    const done = await floor.message<{ failed: number; cpuMs: number }>('done');
    // The floor's own CPU, measured in its process from its first request to its last answer.
    return { failed: done.failed, senders: [{ label: 'floor', ms: done.cpuMs }] };
  });
}

export function findAlertmanager(): { path: string; version: string } | undefined {
  const names = ['prometheus-alertmanager', 'alertmanager'];
  const found = (process.env.PATH ?? '')
    .split(path.delimiter)
    .flatMap((dir) => names.map((name) => path.join(dir, name)))
    .find((candidate) => fs.existsSync(candidate));
  if (found === undefined) return undefined;
  const version = execFileSync(found, ['--version'], { encoding: 'utf8', stdio: 'pipe' }).split('\n')[0];
  return { path: found, version: version?.trim() ?? 'unknown version' };
}

/**
 * Every alert its own group (`group_by: ['...']`), sent at once (`group_wait: 0s`); the intervals only matter
 * for alerts that join a group already notified, or repeat, which none does within a round. No resolved
 * notifications: the process is stopped with its alerts still firing. (JSON is YAML.)
 */
const config = (url: string, caFile: string) => {
  const timing = { group_wait: '0s', group_interval: '1s', repeat_interval: '1m' };
  const route = { receiver: 'bench', group_by: ['...'], ...timing };
  const hook = { url, send_resolved: false, http_config: { tls_config: { ca_file: caFile } } };
  return JSON.stringify({ route, receivers: [{ name: 'bench', webhook_configs: [hook] }] });
};

/** The same changes as alerts, one per node, `batch` to a POST /api/v2/alerts, one request at a time. */
export async function measureAlertmanager(a: Anchor, binary: string, receiver: Receiver, batch: number) {
  const dir = path.join(a.logDir, `alertmanager-${a.round}`);
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'alertmanager.yml'), config(receiver.url('/alertmanager'), a.caFile));
  const port = await freePort();
  const alertmanager = await startChild({
    command: binary,
    // No peers: an empty cluster address turns the cluster (and its settling wait) off.
    args: [
      `--config.file=${path.join(dir, 'alertmanager.yml')}`,
      `--storage.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ],
    env: process.env,
    cwd: dir,
    logFile: path.join(dir, 'alertmanager.log'),
    ready: { url: `http://127.0.0.1:${port}/-/ready` },
    stopGraceMs: 5_000,
  });
  const alerts = Array.from({ length: a.count }, (_, i) => ({
    labels: {
      alertname: 'TunnelStateChange',
      round: String(a.round),
      node: nodeName(i),
      state: 'TERMINATED',
    },
    annotations: { summary: `Tunnel ${TUNNEL.name} on ${nodeName(i)} is TERMINATED (was CONNECTED).` },
  }));
  const bodies = Array.from({ length: Math.ceil(a.count / batch) }, (_, n) =>
    JSON.stringify(alerts.slice(n * batch, (n + 1) * batch)),
  );
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  return timed(a, receiver, alertmanager, async () => {
    for (const body of bodies) {
      const headers = { 'content-type': 'application/json' };
      const response = await pool.request({ method: 'POST', path: '/api/v2/alerts', headers, body });
      const text = await response.body.text();
      if (response.statusCode !== 200)
        throw new Error(`Alertmanager answered ${response.statusCode}: ${text}`);
    }
    await pool.close();
    return {};
  });
}
