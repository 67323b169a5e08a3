// The outage's anchor: Alertmanager (Debian's prometheus-alertmanager, when installed) grouping by organization
// with the same wait, given the same 5,000 alerts in one POST /api/v2/alerts, its webhook receiver the
// runner's stand-in. Its resolves are not waited for: they go out `group_interval` (5 m) after a group's last
// message, beyond the section's length.
import fs from 'node:fs';
import path from 'node:path';
import { freePort, startChild } from '../lib/processes.js';
import { progress } from '../lib/report.js';
import { orgName } from './fleet.js';
import type { Arrival, StandIns } from './sinks.js';

/** Route and receiver as the brief of this measurement says (JSON is YAML). */
const config = (url: string, caFile: string, groupWaitS: number) => {
  const timing = { group_wait: `${groupWaitS}s`, group_interval: '5m', repeat_interval: '4h' };
  const route = { receiver: 'outage', group_by: ['org'], ...timing };
  const hook = { url, send_resolved: true, http_config: { tls_config: { ca_file: caFile } } };
  return JSON.stringify({ route, receivers: [{ name: 'outage', webhook_configs: [hook] }] });
};

export interface AnchorRun {
  /** When the alerts were POSTed, and when Alertmanager answered. */
  sentAt: number;
  answeredAt: number;
  arrivals: Arrival[];
}

/** `settle`: resolves once what is expected has arrived, or when it is time to stop waiting. */
export async function measureAlertmanager(
  binary: string,
  o: { dir: string; caFile: string; sinks: StandIns; orgs: number; perOrg: number; groupWaitS: number },
  settle: (from: number, expected: () => boolean) => Promise<void>,
): Promise<AnchorRun> {
  fs.mkdirSync(path.join(o.dir, 'data'), { recursive: true });
  const file = path.join(o.dir, 'alertmanager.yml');
  fs.writeFileSync(file, config(o.sinks.url('/alertmanager'), o.caFile, o.groupWaitS));
  const port = await freePort();
  const alertmanager = await startChild({
    command: binary,
    // No peers: an empty cluster address turns the cluster (and its settling wait) off.
    args: [
      `--config.file=${file}`,
      `--storage.path=${path.join(o.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ],
    env: process.env,
    cwd: o.dir,
    logFile: path.join(o.dir, 'alertmanager.log'),
    ready: { url: `http://127.0.0.1:${port}/-/ready` },
    stopGraceMs: 5_000,
  });
  try {
    const alerts = Array.from({ length: o.orgs * o.perOrg }, (_, k) => ({
      labels: { alertname: 'NodeUnreachable', org: orgName(Math.floor(k / o.perOrg)), node: `outage-${k}` },
      annotations: { summary: `outage-${k} is UNREACHABLE (was ALIVE).` },
    }));
    const body = JSON.stringify(alerts);
    const received = o.sinks.arrivals.get('Alertmanager')!;
    received.length = 0;
    progress(
      `Alertmanager: ${alerts.length.toLocaleString('en-US')} alerts in one POST, group_wait ${o.groupWaitS} s`,
    );
    const sentAt = Date.now();
    const response = await fetch(`http://127.0.0.1:${port}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const answer = await response.text();
    const answeredAt = Date.now();
    if (response.status !== 200) throw new Error(`Alertmanager answered ${response.status}: ${answer}`);
    await settle(sentAt, () => new Set(received.map((a) => a.org)).size === o.orgs);
    return { sentAt, answeredAt, arrivals: [...received] };
  } finally {
    await alertmanager.stop();
  }
}
