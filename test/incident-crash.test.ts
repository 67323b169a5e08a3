import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { until } from './support/fleet.js';
import { serviceEnv } from './support/service-env.js';
import { Server } from './support/service-process.js';
import { testCertificates } from './support/tls.js';
import { startCorrectReceiver, type ReceiverWithSecret } from './support/webhooks.js';

// kill -9 between an incident's first word and its update: the update is a row (the incident's due time and
// its flush job), so the restarted service sends it once, and not before group_wait is over.
const KEY = `ew_${randomBytes(24).toString('base64url')}`;
const NODES = 20;
const GROUP_WAIT_S = 5;
let database: TestDatabase;
let endpoint: ReceiverWithSecret;
let caDir: string;
const servers: Server[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  endpoint = await startCorrectReceiver();
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
    // Short, so that silent nodes are UNREACHABLE within seconds.
    NODE_REPORT_INTERVAL_S: '1',
    NODE_HEARTBEAT_TIMEOUT_S: '3',
    JOB_POLL_INTERVAL_MS: '250',
    JOB_LEASE_MS: '2000',
  });
  servers.push(server);
  return server.started();
}

async function call(server: Server, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await server.fetch(path, headers['x-node-token'] === undefined ? KEY : null, body, headers);
  const text = await res.text();
  expect(res.status, text).toBeLessThan(300);
  return text === '' ? {} : (JSON.parse(text) as Record<string, any>);
}

/** What the receiver took: each message's body, when it was signed (sent), and its delivery id. */
const received = () =>
  endpoint.receiver.requests
    .filter((request) => request.method === 'POST')
    .map((request) => ({
      body: JSON.parse(request.body) as Record<string, any>,
      sentAt: Number(request.headers['x-service-timestamp']),
      deliveryId: String(request.headers['x-service-delivery']),
    }));

describe('a crash inside an incident', () => {
  it('neither loses the update nor sends it early, nor twice', async () => {
    // One environment for both processes: the same database and secret key.
    const env = serviceEnv(database);
    const first = await start(env);
    const me = await call(first, '/api/v1/user/me');
    const hook = await call(first, '/api/v1/webhook', {
      name: 'Receiver',
      url: `${endpoint.receiver.url}/hook`,
      secret: endpoint.secret.value,
    });
    expect((await call(first, `/api/v1/webhook/${hook.id}/verify`, {})).status).toBe('SUCCESS');
    await call(first, '/api/v1/mysubscriptions', {
      name: 'Nodes down',
      type: 'NODE_STATE_CHANGE',
      settings: {
        org_id: me.org_id,
        alert_me: 'UNREACHABLE',
        group_by: 'organization',
        group_wait: GROUP_WAIT_S,
        // Under load the restarted process may judge some nodes only after the update went: they are told in
        // the next one, group_interval later, which the wait below must see.
        group_interval: GROUP_WAIT_S,
      },
      channel_type: 'webhook',
      channel_id: hook.id,
    });
    const tokens: string[] = [];
    for (let i = 0; i < NODES; i += 1)
      tokens.push((await call(first, '/api/v1/node', { name: `n-${i}` })).token);
    // One report each, at once; then silence.
    await Promise.all(
      tokens.map((token) => call(first, '/api/v1/agent/report', {}, { 'x-node-token': token })),
    );

    await until('the first word', () => received().length >= 1, 30_000);
    first.kill();
    await first.exited;

    await start(env);
    await until(
      'the update with every node',
      () => {
        const firing = received().at(-1)?.body.counts.firing as number | undefined;
        return firing === NODES;
      },
      60_000,
    );
    const messages = received();
    const opening = messages[0]!.body;
    expect(opening.incident).toMatchObject({ sequence: 1, reason: 'opened' });
    // Each sequence once (a duplicate could only be a resend after a 2xx, under the same delivery id).
    const bySequence = new Map<number, Set<string>>();
    for (const message of messages) {
      const sequence = message.body.incident.sequence as number;
      bySequence.set(sequence, (bySequence.get(sequence) ?? new Set()).add(message.deliveryId));
    }
    expect([...bySequence.values()].every((ids) => ids.size === 1)).toBe(true);
    expect([...bySequence.keys()]).toEqual(Array.from({ length: bySequence.size }, (_, i) => i + 1));
    // The update not before group_wait was over.
    const openedAt = Date.parse(opening.incident.opened_at as string);
    const update = messages.find((message) => message.body.incident.sequence === 2)!;
    expect(update.body.incident.reason).toBe('updated');
    expect(update.sentAt - openedAt).toBeGreaterThanOrEqual(GROUP_WAIT_S * 1_000);
  }, 150_000);
});
