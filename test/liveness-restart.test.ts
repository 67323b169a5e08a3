import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { serviceEnv } from './support/service-env.js';
import { Server } from './support/service-process.js';

// The restart grace (docs/rules/alerts-and-fleet.md#liveness) with a real restart: edgewatch killed, down for
// longer than the heartbeat timeout, started again. The node could not report meanwhile, so it gets one full
// timeout from the restart before it is judged, and is judged after that.
const TIMEOUT_S = 1;
const KEY = `ew_${randomBytes(24).toString('base64url')}`;
let database: TestDatabase | undefined;
const servers: Server[] = [];

afterAll(async () => {
  for (const server of servers) server.kill();
  await database?.drop();
});

async function start(env: Record<string, string>): Promise<Server> {
  const server = new Server({ ...env, NODE_HEARTBEAT_TIMEOUT_S: String(TIMEOUT_S), BOOTSTRAP_API_KEY: KEY });
  servers.push(server);
  return server.started();
}

async function json(response: Promise<Response>) {
  const res = await response;
  expect(res.status, res.statusText).toBeLessThan(300);
  return (await res.json()) as Record<string, any>;
}

describe('the restart grace', () => {
  it('judges no node until a full timeout after edgewatch comes back, then judges it', async () => {
    database = await createTestDatabase();
    const env = serviceEnv(database);
    const first = await start(env);
    const node = await json(first.fetch('/api/v1/node', KEY, { name: 'through-the-restart' }));
    await json(first.fetch('/api/v1/agent/report', null, {}, { 'x-node-token': node.token }));
    first.kill();
    await first.exited;
    // Down for twice the timeout (and the heartbeat flush allowance): silent long enough to be judged.
    await new Promise((resolve) => setTimeout(resolve, 2 * TIMEOUT_S * 1_000 + 1_000));

    // Taken before the start: the process cannot have begun judging earlier, however slow its start.
    const restartedAt = Date.now();
    const second = await start(env);
    const read = () => json(second.fetch(`/api/v1/node/${node.id}`, KEY));
    expect((await read()).node_state).toBe('ALIVE');

    const deadline = Date.now() + 15_000;
    while ((await read()).node_state !== 'UNREACHABLE' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const events = await json(second.fetch(`/api/v2/event?node_id=${node.id}&type=NODE_STATE_CHANGE`, KEY));
    const judged = events.results.find((event: any) => event.condition === 'UNREACHABLE');
    expect(judged, JSON.stringify(events.results)).toBeDefined();
    // The sweep due while edgewatch was down runs as the worker starts: judged then, the node's event
    // would come less than a full timeout after the restart.
    expect(Date.parse(judged.detected_at) - restartedAt).toBeGreaterThanOrEqual(TIMEOUT_S * 1_000);
  });
});
