// The service as the sections run it: a build's program (dist/main.js) in processes of its own, `serve` (API
// and worker), `serve --role api` or `serve --role worker`, with only the environment a section gives it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { adminApi, type AdminApi } from './api.js';
import { freePort, PROJECT_ROOT, startChild } from './processes.js';
import type { BenchCertificates } from './tls.js';

/** The Node options `npm start` runs the service with (bin/edgewatch.js must agree): what is deployed. */
export function startNodeOptions(): string[] {
  const read = (file: string) => fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
  const start: string = JSON.parse(read('package.json')).scripts.start ?? '';
  const options = /^node((?:\s+--\S+)*)\s+dist\/main\.js serve$/.exec(start)?.[1]?.trim();
  if (options === undefined)
    throw new Error(`package.json "start" is not \`node [options] dist/main.js serve\``);
  const fromBin = /^#!\/usr\/bin\/env(?: -S)? node(.*)$/m.exec(read('bin/edgewatch.js'))?.[1]?.trim();
  if (fromBin !== options)
    throw new Error(`bin/edgewatch.js runs node with "${fromBin}", npm start with "${options}"`);
  return options === '' ? [] : options.split(/\s+/);
}

/** Only what the process needs: a stray DATABASE_URL or SMTP_URL in the caller's shell must not leak in. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { PATH, HOME, TMPDIR } = process.env;
  return { PATH, HOME, TMPDIR, LOG_LEVEL: 'info', HOST: '127.0.0.1', ...extra };
}

/** The service's settings to call webhook receivers on this machine, with certificates from the bench CA. */
export const localWebhooksEnv = (certificates: BenchCertificates) => ({
  NODE_EXTRA_CA_CERTS: certificates.caFile,
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
});

/** This checkout or another (--compare), with its own dist/; `env` adds settings (e.g. tracing on). */
export type Build = { label: string; root: string; env?: Record<string, string> };

export const THIS_BUILD: Build = { label: 'this build', root: PROJECT_ROOT };

/** A checkout of another commit, built there; named by its commit when it is a git checkout. */
export function otherBuild(dir: string): Build {
  const root = path.resolve(dir);
  if (!fs.existsSync(path.join(root, 'dist', 'main.js')))
    throw new Error(`--compare ${dir}: no dist/main.js there (run \`npm ci && npm run build\` in it)`);
  try {
    const git = ['-C', root, 'rev-parse', '--short', 'HEAD'];
    return { label: execFileSync('git', git, { encoding: 'utf8', stdio: 'pipe' }).trim(), root };
  } catch {
    return { label: path.basename(root), root };
  }
}

/** `baseUrl` and `api` (as the admin of BOOTSTRAP_API_KEY): undefined for a worker. */
export type Service = { pid: number; baseUrl?: string; api?: AdminApi; stop: () => Promise<void> };

/** `env`: DATABASE_URL, SECRET_KEY, BOOTSTRAP_API_KEY and any other setting. A worker is ready once it says so. */
export async function startService(options: {
  role?: 'api' | 'worker' | undefined;
  build?: Build;
  nodeOptions: string[];
  logFile: string;
  env: Record<string, string>;
}): Promise<Service> {
  const { root, env: buildEnv } = options.build ?? THIS_BUILD;
  const settings = { ...options.env, ...buildEnv };
  const main = path.join(root, 'dist', 'main.js');
  if (!fs.existsSync(main)) throw new Error('dist/main.js is missing: run `npm run build` first.');
  const args = [...options.nodeOptions, main, 'serve', ...(options.role ? ['--role', options.role] : [])];
  const { logFile } = options;
  if (options.role === 'worker') {
    const ready = { logText: 'job worker started' };
    return startChild({ args, env: childEnv(settings), cwd: root, logFile, ready });
  }
  const baseUrl = `http://127.0.0.1:${await freePort()}`;
  const env = childEnv({ ...settings, PORT: baseUrl.split(':')[2]!, PUBLIC_URL: baseUrl });
  const child = await startChild({ args, env, cwd: root, logFile, ready: { url: `${baseUrl}/readyz` } });
  const key = settings.BOOTSTRAP_API_KEY;
  const api = key === undefined ? undefined : adminApi(baseUrl, key);
  return { pid: child.pid, baseUrl, api, stop: child.stop };
}

export const stopAll = (services: { stop: () => Promise<unknown> }[]) =>
  Promise.all(services.map((s) => s.stop()));

/** A webhook to `url`, verified through the API's challenge (the receiver must answer it). */
export async function verifiedWebhook(api: AdminApi, name: string, url: string, secret: string) {
  const { id } = await api.call('POST', '/api/v1/webhook', { name, url, secret });
  const verified = await api.call('POST', `/api/v1/webhook/${id}/verify`, {});
  if (verified.status !== 'SUCCESS')
    throw new Error(`webhook ${name} not verified: ${JSON.stringify(verified)}`);
  return id;
}

/** An alert on every tunnel change of the admin's organization, sent to the webhook; returns its id. */
export async function tunnelAlert(api: AdminApi, name: string, webhookId: string): Promise<string> {
  const { org_id } = await api.call('GET', '/api/v1/user/me');
  const alert = { name, type: 'TUNNEL_STATE_CHANGE', settings: { org_id }, channel_type: 'webhook' };
  return (await api.call('POST', '/api/v1/mysubscriptions', { ...alert, channel_id: webhookId })).id;
}
