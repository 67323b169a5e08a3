import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentProxy } from './support/agent-proxy.js';
import { AgentProcess, eventually, FakeDevice } from './support/agent-process.js';
import { startTestApp, type TestApp } from './support/harness.js';

const PEER = 'xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=';

/** The agent against the real service, through a proxy that counts its requests; tools faked on PATH. */
describe('edgewatch agent against the service', () => {
  let t: TestApp;
  let proxy: AgentProxy;
  let device: FakeDevice;
  let agent: AgentProcess | undefined;
  const listeners: (http.Server | net.Server)[] = [];

  beforeAll(async () => {
    t = await startTestApp({ env: { NODE_REPORT_INTERVAL_S: '30' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    proxy = new AgentProxy(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`);
    await proxy.start();
  }, 30_000);

  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    device?.remove();
    proxy.seen.length = 0;
    proxy.overrides.length = 0;
  });

  afterAll(async () => {
    await proxy.stop();
    for (const server of listeners) server.close();
    await t.close();
  });

  async function registerNode(name: string): Promise<string> {
    const res = await t.request('POST', '/api/v1/node', { body: { name } });
    expect(res.status, res.text).toBe(201);
    fs.writeFileSync(device.tokenFile, `  ${res.body.token as string}\n`, { mode: 0o600 });
    return res.body.id as string;
  }

  const nodeState = async (id: string) =>
    (await t.ctx.db.selectFrom('nodes').select('node_state').where('id', '=', id).executeTakeFirstOrThrow())
      .node_state;
  const statuses = async (id: string) => {
    const services = await t.ctx.db
      .selectFrom('services')
      .select(['key', 'status'])
      .where('node_id', '=', id)
      .execute();
    const tunnels = await t.ctx.db
      .selectFrom('tunnels')
      .select(['key', 'state'])
      .where('node_id', '=', id)
      .execute();
    return Object.fromEntries([
      ...services.map((s) => [s.key, s.status] as const),
      ...tunnels.map((s) => [s.key, s.state] as const),
    ]);
  };

  async function httpHealth(): Promise<string> {
    const server = http.createServer((_req, res) => res.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    listeners.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`;
  }

  async function tcpPort(): Promise<number> {
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    listeners.push(server);
    return (server.address() as AddressInfo).port;
  }

  it('reports the device: a failed unit is UNHEALTHY within check_seconds + 2 s and back; an old handshake TERMINATED', async () => {
    device = new FakeDevice();
    const id = await registerNode('agent-e2e-1');
    device.unit('mosquitto.service', 'active');
    device.handshake('wg0', PEER, 5);
    const config = device.config(
      [
        `server: ${proxy.url}`,
        'check_seconds: 1',
        'services:',
        '  - { name: mqtt, systemd: mosquitto.service }',
        `  - { name: api, http: { url: "${await httpHealth()}" } }`,
        `  - { name: db, tcp: "127.0.0.1:${await tcpPort()}" }`,
        '  - { name: app, command: ["true"] }',
        'tunnels:',
        `  - { name: hq, wireguard: { interface: wg0, peer: "${PEER}", max_handshake_age_seconds: 180 } }`,
        '',
      ].join('\n'),
    );
    agent = new AgentProcess(device, ['--config', config]);
    await eventually(async () => {
      expect(await nodeState(id)).toBe('ALIVE');
      expect(await statuses(id)).toEqual({
        mqtt: 'HEALTHY',
        api: 'HEALTHY',
        db: 'HEALTHY',
        app: 'HEALTHY',
        hq: 'CONNECTED',
      });
    }, 15_000);
    const node = await t.request('GET', `/api/v1/node/${id}`);
    expect(node.body.status.node.info.version.software_version).toBe('Edge OS 4.2');
    expect(node.body.status.node.addresses.length).toBeGreaterThan(0);

    device.unit('mosquitto.service', 'failed');
    let flipped = Date.now();
    await eventually(async () => expect((await statuses(id)).mqtt).toBe('UNHEALTHY'), 5_000, 50);
    expect(Date.now() - flipped).toBeLessThanOrEqual(3_000);
    device.unit('mosquitto.service', 'active');
    flipped = Date.now();
    await eventually(async () => expect((await statuses(id)).mqtt).toBe('HEALTHY'), 5_000, 50);
    expect(Date.now() - flipped).toBeLessThanOrEqual(3_000);

    device.handshake('wg0', PEER, 200);
    await eventually(async () => expect((await statuses(id)).hq).toBe('TERMINATED'), 5_000, 50);
    expect(agent.log).toContain('latest handshake');
    expect(agent.log).not.toContain(fs.readFileSync(device.tokenFile, 'utf8').trim());
  }, 60_000);

  it('with nothing changing, sends only heartbeats, each interval ±10 %, and a full report every tenth', async () => {
    device = new FakeDevice();
    await registerNode('agent-e2e-2');
    agent = new AgentProcess(device, [
      '--config',
      device.config(`server: ${proxy.url}\nheartbeat_seconds: 1\ncheck_seconds: 1\n`),
    ]);
    await eventually(() => expect(proxy.seen.length).toBeGreaterThanOrEqual(12), 20_000, 100);
    const [first, ...rest] = proxy.seen.slice(0, 12);
    expect(first!.bytes).toBeGreaterThan(0);
    expect(rest.map((r) => r.bytes > 0)).toEqual([...Array(9).fill(false), true, false]);
    const gaps = rest.map((r, i) => r.at - proxy.seen[i]!.at);
    // ±10 % of 1 s, and the scheduling of two processes on a busy machine.
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(880);
      expect(gap).toBeLessThanOrEqual(1_400);
    }
    expect(proxy.seen.every((r) => r.status === 200)).toBe(true);
  }, 40_000);

  it('waits as long as a 429 says (Retry-After: 5)', async () => {
    device = new FakeDevice();
    await registerNode('agent-e2e-3');
    proxy.overrides.push({ status: 429, headers: { 'retry-after': '5' } });
    agent = new AgentProcess(device, [
      '--config',
      device.config(`server: ${proxy.url}\nheartbeat_seconds: 1\n`),
    ]);
    await eventually(() => expect(proxy.seen.length).toBeGreaterThanOrEqual(2), 15_000, 50);
    const [refused, next] = proxy.seen;
    expect(refused!.status).toBe(429);
    expect(next!.at - refused!.at).toBeGreaterThanOrEqual(5_000);
    expect(next!.bytes).toBeGreaterThan(0);
    expect(next!.status).toBe(200);
  }, 30_000);

  it('exits 78 after at most two requests when its token is revoked, and follows a rotated one', async () => {
    device = new FakeDevice();
    const id = await registerNode('agent-e2e-4');
    agent = new AgentProcess(device, [
      '--config',
      device.config(`server: ${proxy.url}\nheartbeat_seconds: 1\n`),
    ]);
    await eventually(
      () => expect(proxy.seen.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(2),
      10_000,
    );
    // Rotation: a new token, written to the file, is read at the first refusal.
    const renewed = await t.request('POST', `/api/v1/node/${id}/token`);
    expect(renewed.status, renewed.text).toBe(200);
    fs.writeFileSync(device.tokenFile, renewed.body.token as string);
    const before = proxy.seen.length;
    await eventually(
      () => expect(proxy.seen.slice(before).filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1),
      10_000,
    );
    // Revocation: the file keeps the old token.
    expect((await t.request('POST', `/api/v1/node/${id}/token`)).status).toBe(200);
    const revokedAt = proxy.seen.length;
    expect(await agent.exited).toBe(78);
    expect(proxy.seen.length - revokedAt).toBeLessThanOrEqual(2);
    expect(proxy.seen.slice(revokedAt).every((r) => r.status === 401)).toBe(true);
    expect(agent.log).toContain(device.tokenFile);
    expect(agent.log).toContain(proxy.url);
  }, 30_000);

  it('keeps heartbeating through garbage tool output, a missing certificate and a broken os-release', async () => {
    device = new FakeDevice();
    const id = await registerNode('agent-e2e-5');
    device.write('systemctl.mosquitto.service', 'Failed to connect to bus: No such file or directory\n');
    device.write('wg.wg0', '\u0000garbage\tnot-a-number\n');
    device.write('swanctl', '{{{ not vici');
    fs.writeFileSync(device.osRelease, '\u0000\u0001 not=an"os release');
    const config = device.config(
      [
        `server: ${proxy.url}`,
        'heartbeat_seconds: 1',
        'check_seconds: 1',
        `certificate: ${device.dir}/missing.crt`,
        'services: [{ name: mqtt, systemd: mosquitto.service }]',
        'tunnels:',
        `  - { name: hq, wireguard: { interface: wg0, peer: "${PEER}" } }`,
        '  - { name: dc2, ipsec: dc2 }',
        '',
      ].join('\n'),
    );
    agent = new AgentProcess(device, ['--config', config]);
    await eventually(async () => {
      expect(await statuses(id)).toEqual({ mqtt: 'UNHEALTHY', hq: 'TERMINATED', dc2: 'TERMINATED' });
      expect(proxy.seen.filter((r) => r.bytes === 0 && r.status === 200).length).toBeGreaterThanOrEqual(3);
    }, 15_000);
    expect(await nodeState(id)).toBe('ALIVE');
    for (const said of ['Failed to connect to bus', 'missing.crt', 'wg', 'swanctl'])
      expect(agent.log).toContain(said);
    // Each problem once, not at every check.
    expect(agent.log.split('missing.crt').length - 1).toBe(1);
  }, 30_000);
});
