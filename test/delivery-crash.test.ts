import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { until } from './support/fleet.js';
import { delayed } from './support/https-receiver.js';
import { serviceEnv } from './support/service-env.js';
import { Server } from './support/service-process.js';
import { testCertificates } from './support/tls.js';
import { correctEndpoint, startCorrectReceiver, type ReceiverWithSecret } from './support/webhooks.js';

// kill -9 in the middle of a burst of 1,000 notifications: after a restart the receiver has every one of
// them (by delivery id; a notification sent twice keeps its id).
const KEY = `ew_${randomBytes(24).toString('base64url')}`;
const NODES = 100;
const ALERTS = 10;
let database: TestDatabase;
let endpoint: ReceiverWithSecret;
let caDir: string;
const servers: Server[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  endpoint = await startCorrectReceiver();
  // A little slow, so the burst is still under way when the process is killed.
  endpoint.receiver.handle(
    delayed(
      3,
      correctEndpoint(() => endpoint.secret.value),
    ),
  );
  caDir = mkdtempSync(join(tmpdir(), 'edgewatch-ca-'));
  writeFileSync(join(caDir, 'ca.pem'), testCertificates().ca);
});
afterAll(async () => {
  for (const server of servers) server.kill();
  await endpoint.receiver.close();
  await database.drop();
  rmSync(caDir, { recursive: true, force: true });
});

function start(env: Record<string, string>): Promise<Server> {
  const server = new Server({
    ...env,
    BOOTSTRAP_API_KEY: KEY,
    NODE_EXTRA_CA_CERTS: join(caDir, 'ca.pem'),
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    MAX_WEBHOOK_ALERTS_PER_USER: String(ALERTS),
    JOB_LEASE_MS: '2000',
  });
  servers.push(server);
  return server.started();
}

async function call(server: Server, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await server.fetch(path, headers['x-node-token'] === undefined ? KEY : null, body, headers);
  const text = await res.text();
  expect(res.status, text).toBeLessThan(300);
  return JSON.parse(text) as Record<string, any>;
}

const deliveryIds = () =>
  new Set(
    endpoint.receiver.requests
      .filter((request) => request.method === 'POST')
      .map((request) => String(request.headers['x-service-delivery'])),
  );

describe('a crash during a burst of notifications', () => {
  it('loses none of them', async () => {
    const env = serviceEnv(database);
    const first = await start(env);
    const me = await call(first, '/api/v1/user/me');
    const hook = await call(first, '/api/v1/webhook', {
      name: 'Receiver',
      url: `${endpoint.receiver.url}/hook`,
      secret: endpoint.secret.value,
    });
    expect((await call(first, `/api/v1/webhook/${hook.id}/verify`, {})).status).toBe('SUCCESS');
    for (let i = 0; i < ALERTS; i += 1) {
      await call(first, '/api/v1/mysubscriptions', {
        name: `Tunnels ${i}`,
        type: 'TUNNEL_STATE_CHANGE',
        settings: { org_id: me.org_id },
        channel_type: 'webhook',
        channel_id: hook.id,
      });
    }
    const tokens: string[] = [];
    for (let i = 0; i < NODES; i += 1)
      tokens.push((await call(first, '/api/v1/node', { name: `n-${i}` })).token);
    // Each first report sees a tunnel for the first time: one event, ten notifications.
    await Promise.all(
      tokens.map((token) =>
        call(
          first,
          '/api/v1/agent/report',
          { tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED' }] },
          { 'x-node-token': token },
        ),
      ),
    );
    await until('the burst under way', () => deliveryIds().size >= 50, 30_000);
    first.kill();
    await first.exited;
    const beforeRestart = deliveryIds().size;
    expect(beforeRestart).toBeLessThan(NODES * ALERTS);

    await start(env);
    await until('every notification', () => deliveryIds().size === NODES * ALERTS, 60_000);
    expect(deliveryIds().size).toBe(NODES * ALERTS);
  }, 150_000);
});
