// The throughput's two anchors, timed as the service is: the floor, the same signed body POSTed by a bare
// undici loop (floor-process.ts); and Alertmanager, when installed, a fresh process per round.
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { startAlertmanager } from '../lib/alertmanager.js';
import { PROJECT_ROOT, startChild } from '../lib/processes.js';
import type { Receiver } from '../lib/receiver.js';
import { progress } from '../lib/report.js';
import { childEnv } from '../lib/service.js';
import { processMeter, timeBurst, type Send } from './measure.js';
import { nodeName, TUNNEL } from './seed.js';

export const FLOOR = 'notify floor: undici POST loop';
export const ALERTMANAGER = 'notify anchor: Alertmanager';

type Anchor = { name: string; count: number; round: number; logDir: string; caFile: string };
type Process = { pid: number; stop: () => Promise<void> };

/** `label`: whose CPU counts (the floor reports its own). */
async function timed(a: Anchor, receiver: Receiver, child: Process, label: string, send: Send) {
  progress(`round ${a.round}: ${a.name}`);
  return timeBurst(a.name, receiver, a.count, [processMeter(label, [child])], send).finally(child.stop);
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
  return timed(a, receiver, floor, 'floor', async () => {
    floor.send({ type: 'go' });
    const done = await floor.message<{ failed: number; cpuMs: number }>('done');
    // The floor's own CPU, measured in its process from its first request to its last answer.
    return { failed: done.failed, senders: [{ label: 'floor', ms: done.cpuMs }] };
  });
}

type Batch = { alertmanagerBatch: number };

/**
 * The same changes as alerts, one per node, `alertmanagerBatch` to a POST, one request at a time. Every alert its own
 * group (`group_by: ['...']`), sent at once (`group_wait: 0s`); the intervals only matter for alerts that join
 * a group already notified, or repeat, which none does within a round. No resolved notifications: the
 * process is stopped with its alerts still firing.
 */
export async function measureAlertmanager(a: Anchor & { binary: string }, receiver: Receiver, s: Batch) {
  const batch = s.alertmanagerBatch;
  const route = { group_by: ['...'], group_wait: '0s', group_interval: '1s', repeat_interval: '1m' };
  const dir = path.join(a.logDir, `alertmanager-${a.round}`);
  const url = receiver.url('/alertmanager');
  const alertmanager = await startAlertmanager(a.binary, {
    dir,
    route,
    url,
    caFile: a.caFile,
    sendResolved: false,
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
  return timed(a, receiver, alertmanager, 'Alertmanager', async () => {
    for (const body of bodies) await alertmanager.post(body);
    return {};
  });
}
