import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentProxy } from './support/agent-proxy.js';
import { AgentProcess, eventually, FakeDevice } from './support/agent-process.js';
import { startTestApp, type TestApp } from './support/harness.js';

const OUTAGE_MS = 30_000;
const MAX_BACKOFF_S = 4;

let t: TestApp;
let proxy: AgentProxy;
const device = new FakeDevice();

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  proxy = new AgentProxy(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`);
  await proxy.start();
}, 30_000);

afterAll(async () => {
  await proxy.stop();
  await t.close();
  device.remove();
});

it('loses nothing when the service is out of reach for 30 s and the agent is killed meanwhile', async () => {
  const created = await t.request('POST', '/api/v1/node', { body: { name: 'agent-outage' } });
  const id = created.body.id as string;
  fs.writeFileSync(device.tokenFile, created.body.token as string);
  device.unit('mosquitto.service', 'active');
  device.unit('nginx.service', 'active');
  const config = device.config(
    [
      `server: ${proxy.url}`,
      ...['check_seconds: 1', 'heartbeat_seconds: 1', `max_backoff_seconds: ${MAX_BACKOFF_S}`],
      'services: [{ name: mqtt, systemd: mosquitto.service }, { name: web, systemd: nginx.service }]',
      '',
    ].join('\n'),
  );
  const statuses = async () => {
    const rows = await t.ctx.db
      .selectFrom('services')
      .select(['key', 'status'])
      .where('node_id', '=', id)
      .execute();
    return Object.fromEntries(rows.map((row) => [row.key, row.status]));
  };
  let agent = new AgentProcess(device, ['--config', config]);
  try {
    await eventually(
      async () => expect(await statuses()).toEqual({ mqtt: 'HEALTHY', web: 'HEALTHY' }),
      15_000,
    );

    await proxy.stop();
    const outageFrom = Date.now();
    device.unit('mosquitto.service', 'failed');
    // The change waits on disk for the server.
    const pending = path.join(device.stateDir, 'pending-report.json');
    await eventually(() => expect(fs.readFileSync(pending, 'utf8')).toContain('UNHEALTHY'), 5_000);
    agent.kill('SIGKILL');
    await agent.exited;
    device.unit('mosquitto.service', 'active');
    device.unit('nginx.service', 'failed');
    agent = new AgentProcess(device, ['--config', config]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, outageFrom + OUTAGE_MS - Date.now())));

    await proxy.start();
    const back = Date.now();
    await eventually(
      async () => expect(await statuses()).toEqual({ mqtt: 'HEALTHY', web: 'UNHEALTHY' }),
      15_000,
      50,
    );
    // Within the backoff cap, plus a check and the 2 s between two reports.
    expect(Date.now() - back).toBeLessThanOrEqual((MAX_BACKOFF_S + 4) * 1_000);
    // The report left on disk went first: the server learnt that mqtt had failed meanwhile.
    const mqtt = await t.ctx.db
      .selectFrom('fleet_events')
      .select(['current_state'])
      .where('node_id', '=', id)
      .where('resource_name', '=', 'mqtt')
      .orderBy('sequence')
      .execute();
    expect(mqtt.map((event) => event.current_state)).toEqual(['HEALTHY', 'UNHEALTHY', 'HEALTHY']);
    // The agent clears it once the answer reaches it, which may be a moment after the server committed.
    await eventually(() => expect(fs.existsSync(pending)).toBe(false), 5_000);
  } finally {
    await agent.stop();
  }
}, 90_000);
