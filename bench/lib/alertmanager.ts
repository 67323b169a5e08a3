// Prometheus Alertmanager, the anchor of the notification and outage sections: found on PATH (Debian's
// prometheus-alertmanager), a process of its own with one webhook receiver, fed alerts by POST /api/v2/alerts.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Pool } from 'undici';
import { freePort, startChild } from './processes.js';

export function findAlertmanager(): { path: string; version: string } | undefined {
  const found = (process.env.PATH ?? '')
    .split(path.delimiter)
    .flatMap((dir) => ['prometheus-alertmanager', 'alertmanager'].map((name) => path.join(dir, name)))
    .find((candidate) => fs.existsSync(candidate));
  if (found === undefined) return undefined;
  const version = execFileSync(found, ['--version'], { encoding: 'utf8', stdio: 'pipe' }).split('\n')[0];
  return { path: found, version: version?.trim() ?? 'unknown version' };
}

type Route = { group_by: string[]; group_wait: string; group_interval: string; repeat_interval: string };
type Options = { dir: string; route: Route; url: string; caFile: string; sendResolved: boolean };

/** Alertmanager in `dir`, its route sending to the webhook at `url`; `post` sends a JSON array of alerts. */
export async function startAlertmanager(binary: string, o: Options) {
  fs.mkdirSync(path.join(o.dir, 'data'), { recursive: true });
  const config = path.join(o.dir, 'alertmanager.yml');
  const hook = {
    url: o.url,
    send_resolved: o.sendResolved,
    http_config: { tls_config: { ca_file: o.caFile } },
  };
  // JSON is YAML.
  const receivers = [{ name: 'bench', webhook_configs: [hook] }];
  fs.writeFileSync(config, JSON.stringify({ route: { receiver: 'bench', ...o.route }, receivers }));
  const port = await freePort();
  const child = await startChild({
    command: binary,
    // No peers: an empty cluster address turns the cluster (and its settling wait) off.
    args: [
      ...[`--config.file=${config}`, `--storage.path=${path.join(o.dir, 'data')}`],
      ...[`--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address='],
    ],
    env: process.env,
    cwd: o.dir,
    logFile: path.join(o.dir, 'alertmanager.log'),
    ready: { url: `http://127.0.0.1:${port}/-/ready` },
    stopGraceMs: 5_000,
  });
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  return {
    pid: child.pid,
    async post(body: string) {
      const headers = { 'content-type': 'application/json' };
      const response = await pool.request({ method: 'POST', path: '/api/v2/alerts', headers, body });
      const text = await response.body.text();
      if (response.statusCode !== 200)
        throw new Error(`Alertmanager answered ${response.statusCode}: ${text}`);
    },
    stop: () => pool.close().then(child.stop),
  };
}
