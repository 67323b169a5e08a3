// The outage's anchor: Alertmanager grouping by organization with the same wait, given the same alerts in one
// POST /api/v2/alerts, its webhook receiver the runner's. Its resolves would go out group_interval (5 m) after
// a group's last message: not waited for.
import fs from 'node:fs';
import path from 'node:path';
import { freePort, startChild } from '../lib/processes.js';

type Options = { dir: string; caFile: string; url: string; groupWaitS: number; alerts: object[] };

/** `settle`: resolves once what is expected has arrived. Returns when the alerts were POSTed. */
export async function measureAlertmanager(
  binary: string,
  o: Options,
  settle: (from: number) => Promise<void>,
) {
  fs.mkdirSync(path.join(o.dir, 'data'), { recursive: true });
  const file = path.join(o.dir, 'alertmanager.yml');
  const timing = { group_wait: `${o.groupWaitS}s`, group_interval: '5m', repeat_interval: '4h' };
  const hook = { url: o.url, send_resolved: true, http_config: { tls_config: { ca_file: o.caFile } } };
  const route = { receiver: 'outage', group_by: ['org'], ...timing };
  fs.writeFileSync(file, JSON.stringify({ route, receivers: [{ name: 'outage', webhook_configs: [hook] }] }));
  const port = await freePort();
  const alertmanager = await startChild({
    command: binary,
    // No peers: an empty cluster address turns the cluster (and its settling wait) off.
    args: [
      ...[`--config.file=${file}`, `--storage.path=${path.join(o.dir, 'data')}`],
      ...[`--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address='],
    ],
    env: process.env,
    cwd: o.dir,
    logFile: path.join(o.dir, 'alertmanager.log'),
    ready: { url: `http://127.0.0.1:${port}/-/ready` },
    stopGraceMs: 5_000,
  });
  try {
    const sentAt = Date.now();
    const response = await fetch(`http://127.0.0.1:${port}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(o.alerts),
    });
    const answer = await response.text();
    if (response.status !== 200) throw new Error(`Alertmanager answered ${response.status}: ${answer}`);
    await settle(sentAt);
    return sentAt;
  } finally {
    await alertmanager.stop();
  }
}
