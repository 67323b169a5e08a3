import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialect } from './support/database.js';
import { until } from './support/fleet.js';
import { delayed } from './support/https-receiver.js';
import { startPrivatePostgres, type PrivatePostgres } from './support/private-postgres.js';
import { runToEnd, Server } from './support/service-process.js';
import { testCertificates } from './support/tls.js';
import { correctEndpoint, startCorrectReceiver, type ReceiverWithSecret } from './support/webhooks.js';

// PostgreSQL scale-out under faults, with real processes: two `serve --role api` and two `worker` share the
// work and send nothing twice; a worker killed with SIGKILL mid-burst loses nothing; the database restarted
// mid-burst: every process reconnects by itself, /readyz says 503 while it is away, and nothing is lost.
// Roles other than `all` need PostgreSQL; SQLite has one process per database (tested elsewhere).
const KEY = `ew_${randomBytes(24).toString('base64url')}`;
const NODES = 100;
const ALERTS = 10;
const BURST = NODES * ALERTS;

let postgres: PrivatePostgres;
let endpoint: ReceiverWithSecret;
let caDir: string;
const apis: Server[] = [];
const workers: Server[] = [];
const tokens: string[] = [];

function env(): Record<string, string> {
  return {
    DATABASE_URL: postgres.url,
    SECRET_KEY: 'a'.repeat(64),
    BOOTSTRAP_API_KEY: KEY,
    NODE_EXTRA_CA_CERTS: join(caDir, 'ca.pem'),
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    MAX_WEBHOOK_ALERTS_PER_USER: String(ALERTS),
    JOB_LEASE_MS: '3000',
    JOB_POLL_INTERVAL_MS: '250',
    DELIVERY_RETRY_SCHEDULE: '1s',
    LOG_LEVEL: 'debug',
  };
}

async function call(server: Server, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await server.fetch(path, headers['x-node-token'] === undefined ? KEY : null, body, headers);
  const text = await res.text();
  expect(res.status, text).toBeLessThan(300);
  return JSON.parse(text) as Record<string, any>;
}

const posts = () => endpoint.receiver.requests.filter((request) => request.method === 'POST');
const deliveryIds = () => new Set(posts().map((request) => String(request.headers['x-service-delivery'])));

/** Every node reports its tunnel in `state`, half of them to each API process: BURST notifications. */
async function burst(state: 'CONNECTED' | 'TERMINATED'): Promise<void> {
  await Promise.all(
    tokens.map((token, k) =>
      call(
        apis[k % apis.length]!,
        '/api/v1/agent/report',
        { tunnels: [{ key: 'up', name: 'Uplink', state }] },
        { 'x-node-token': token },
      ),
    ),
  );
}

const recordedBy = (worker: Server) =>
  worker.lines.filter((line) => line.msg === 'delivery recorded' && (line as { ok?: boolean }).ok === true)
    .length;

if (dialect === 'sqlite')
  describe('scale-out on SQLite', () => {
    it('is refused with a clear message: one process serves an embedded database', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'edgewatch-roles-'));
      try {
        const env = { DATABASE_URL: `sqlite:${join(dir, 'edgewatch.db')}` };
        for (const args of [['serve', '--role', 'api'], ['worker']]) {
          const { code, stderr } = await runToEnd(args, env);
          expect(code).not.toBe(0);
          expect(stderr).toMatch(/needs PostgreSQL/);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  });

if (dialect === 'postgres')
  describe('two API and two worker processes on PostgreSQL', () => {
    beforeAll(async () => {
      postgres = await startPrivatePostgres();
      endpoint = await startCorrectReceiver();
      // A little slow, so a burst is still under way when a fault comes.
      endpoint.receiver.handle(
        delayed(
          2,
          correctEndpoint(() => endpoint.secret.value),
        ),
      );
      caDir = mkdtempSync(join(tmpdir(), 'edgewatch-ca-'));
      writeFileSync(join(caDir, 'ca.pem'), testCertificates().ca);
      // The first process migrates and bootstraps; the others find it done. Each is tracked before it is
      // awaited, so a failed start still leaves nothing running.
      apis.push(new Server(env(), ['serve', '--role', 'api']));
      await apis[0]!.started();
      apis.push(new Server(env(), ['serve', '--role', 'api']));
      workers.push(new Server(env(), ['worker']), new Server(env(), ['worker']));
      await Promise.all([apis[1]!.started(), ...workers.map((worker) => worker.workerStarted())]);
      const [api] = apis;
      const me = await call(api!, '/api/v1/user/me');
      const hook = await call(api!, '/api/v1/webhook', {
        name: 'Receiver',
        url: `${endpoint.receiver.url}/hook`,
        secret: endpoint.secret.value,
      });
      expect((await call(api!, `/api/v1/webhook/${hook.id}/verify`, {})).status).toBe('SUCCESS');
      for (let i = 0; i < ALERTS; i += 1) {
        await call(api!, '/api/v1/mysubscriptions', {
          name: `Tunnels ${i}`,
          type: 'TUNNEL_STATE_CHANGE',
          settings: { org_id: me.org_id },
          channel_type: 'webhook',
          channel_id: hook.id,
        });
      }
      for (let i = 0; i < NODES; i += 1)
        tokens.push((await call(api!, '/api/v1/node', { name: `n-${i}` })).token);
    }, 120_000);

    afterAll(async () => {
      for (const server of [...apis, ...workers]) server.kill();
      await endpoint?.receiver.close();
      await postgres?.destroy();
      rmSync(caDir, { recursive: true, force: true });
    });

    it('shares the work between the workers and sends nothing twice', async () => {
      await burst('CONNECTED');
      await until('the first burst delivered', () => deliveryIds().size === BURST, 60_000);
      expect(posts()).toHaveLength(BURST);
      await until(
        'both workers recorded theirs',
        () => recordedBy(workers[0]!) + recordedBy(workers[1]!) === BURST,
      );
      expect(recordedBy(workers[0]!)).toBeGreaterThan(0);
      expect(recordedBy(workers[1]!)).toBeGreaterThan(0);
    }, 90_000);

    it('loses nothing when a worker is killed with SIGKILL in the middle of a burst', async () => {
      const before = deliveryIds().size;
      await burst('TERMINATED');
      await until('the burst under way', () => deliveryIds().size >= before + 50, 30_000);
      workers[0]!.kill();
      await workers[0]!.exited;
      expect(deliveryIds().size).toBeLessThan(before + BURST);
      await until(
        'the burst delivered by the other worker',
        () => deliveryIds().size === before + BURST,
        60_000,
      );
    }, 90_000);

    it('reconnects by itself after PostgreSQL restarts mid-burst, says 503 meanwhile, and loses nothing', async () => {
      const before = deliveryIds().size;
      await burst('CONNECTED');
      await until('the burst under way', () => deliveryIds().size >= before + 50, 30_000);
      await postgres.crash();
      const ready = () => apis[0]!.fetch('/readyz', null).then((res) => res.status);
      await until('readyz answers 503', async () => (await ready()) === 503, 15_000);
      await postgres.start();
      await until('readyz answers 200 again', async () => (await ready()) === 200, 30_000);
      await until('the burst delivered', () => deliveryIds().size === before + BURST, 90_000);
      for (const server of [...apis, workers[1]!]) expect(server.running).toBe(true);
      // And the service works as before: a report through the other API process is taken and told.
      const after = deliveryIds().size;
      await call(
        apis[1]!,
        '/api/v1/agent/report',
        { tunnels: [{ key: 'up', name: 'Uplink', state: 'TERMINATED' }] },
        {
          'x-node-token': tokens[0]!,
        },
      );
      await until('a notification after the restart', () => deliveryIds().size === after + ALERTS, 30_000);
    }, 180_000);
  });
