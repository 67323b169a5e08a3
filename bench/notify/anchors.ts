// The anchors' measurements, timed as the service's are: from the first request of the burst to the last
// notification received. The floor: the same signed body POSTed by a bare undici loop. Alertmanager: the same
// changes as alerts.
import path from 'node:path';
import { cpuTimeMs } from '../lib/processes.js';
import { alertBatches, postAlerts, startAlertmanager, type AlertmanagerBinary } from './alertmanager.js';
import { startFloor } from './floor.js';
import { completed, runnerCpuSince, type ThroughputRun } from './measure.js';
import type { Receiver } from './receiver.js';

export interface FloorSettings {
  count: number;
  concurrency: number;
  secret: string;
  caFile: string;
  nodeOptions: string[];
  logDir: string;
}

export async function measureFloor(
  name: string,
  receiver: Receiver,
  round: number,
  settings: FloorSettings,
): Promise<ThroughputRun> {
  const body = receiver.sampleBody();
  if (body === undefined) throw new Error('no notification of the service to take the floor body from');
  const floor = await startFloor({
    url: receiver.hookUrl,
    secret: settings.secret,
    body,
    count: settings.count,
    concurrency: settings.concurrency,
    prefix: `floor-${round}`,
    caFile: settings.caFile,
    nodeOptions: settings.nodeOptions,
    logFile: path.join(settings.logDir, `floor-${round}.log`),
  });
  try {
    const collection = receiver.collect({ expected: settings.count });
    const runner = process.cpuUsage();
    const startedAt = performance.now();
    const sending = floor.go();
    const lastAt = await completed(collection, settings.count, name);
    const runnerCpuMs = runnerCpuSince(runner);
    const { failed, cpuMs } = await sending;
    const firstAt = collection.firstAt();
    return {
      name,
      notifications: collection.count(),
      elapsedMs: lastAt - startedAt,
      perSecond: (settings.count * 1000) / (lastAt - startedAt),
      firstMs: firstAt === undefined ? undefined : firstAt - startedAt,
      reportsMs: undefined,
      requests: collection.requests(),
      connections: collection.connections(),
      senders: [{ label: 'floor', ms: cpuMs }],
      runnerCpuMs,
      duplicates: collection.duplicates(),
      badSignatures: collection.badSignatures(),
      failed,
      settleMs: undefined,
    };
  } finally {
    await floor.close();
  }
}

export async function measureAlertmanager(
  name: string,
  binary: AlertmanagerBinary,
  receiver: Receiver,
  round: number,
  settings: { count: number; batch: number; caFile: string; logDir: string },
): Promise<ThroughputRun> {
  const alertmanager = await startAlertmanager(binary, {
    dir: path.join(settings.logDir, `alertmanager-${round}`),
    receiverUrl: receiver.alertmanagerUrl,
    caFile: settings.caFile,
  });
  try {
    const bodies = alertBatches(settings.count, round, settings.batch);
    const collection = receiver.collect({ expected: settings.count });
    const cpuBefore = cpuTimeMs(alertmanager.pid);
    const runner = process.cpuUsage();
    const posting = postAlerts(alertmanager.baseUrl, bodies);
    const lastAt = await completed(collection, settings.count, name);
    const runnerCpuMs = runnerCpuSince(runner);
    const cpuAfter = cpuTimeMs(alertmanager.pid);
    const startedAt = await posting;
    const firstAt = collection.firstAt();
    return {
      name,
      notifications: collection.count(),
      elapsedMs: lastAt - startedAt,
      perSecond: (settings.count * 1000) / (lastAt - startedAt),
      firstMs: firstAt === undefined ? undefined : firstAt - startedAt,
      reportsMs: undefined,
      requests: collection.requests(),
      connections: collection.connections(),
      senders: [
        {
          label: 'Alertmanager',
          ms: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
        },
      ],
      runnerCpuMs,
      duplicates: collection.duplicates(),
      badSignatures: 0,
      failed: 0,
      settleMs: undefined,
    };
  } finally {
    await alertmanager.stop();
  }
}
