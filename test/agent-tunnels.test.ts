import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkTunnels } from '../src/agent/probe-tunnels.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgewatch-openvpn-'));
const fixture = (name: string) => fs.readFileSync(`test/fixtures/agent/openvpn/${name}`, 'utf8');
const key = { name: 'vpn', key: 'vpn' };
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** OpenVPN's management interface on a Unix socket: a greeting, then `reply` to `state`; what it was sent. */
async function management(reply: string | undefined): Promise<{ socket: string; said: string[] }> {
  const socket = path.join(dir, `mgmt-${Math.random().toString(36).slice(2)}.sock`);
  const said: string[] = [];
  const server = net.createServer((connection) => {
    connection.write(">INFO:OpenVPN Management Interface Version 5 -- type 'help' for more info\r\n");
    connection.on('data', (chunk) => {
      said.push(chunk.toString('utf8'));
      // undefined: it never answers (a hung OpenVPN).
      if (chunk.toString('utf8').startsWith('state') && reply !== undefined) connection.write(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  afterAll(() => void server.close());
  return { socket, said };
}

describe('OpenVPN tunnels, read from their status file and management socket', () => {
  it('is CONNECTED by a fresh status file listing a client, TERMINATED by a stale or missing one', async () => {
    const now = Math.floor(Date.now() / 1000);
    const fresh = fixture('status-v2.txt').replace(/^TIME,([^,]*),\d+$/m, `TIME,$1,${now - 30}`);
    const stale = fixture('status-v2.txt').replace(/^TIME,([^,]*),\d+$/m, `TIME,$1,${now - 600}`);
    fs.writeFileSync(path.join(dir, 'fresh.status'), fresh);
    fs.writeFileSync(path.join(dir, 'stale.status'), stale);
    const [up, old, missing] = await checkTunnels(
      ['fresh.status', 'stale.status', 'missing.status'].map((file) => ({
        ...key,
        type: 'openvpn' as const,
        statusFile: path.join(dir, file),
      })),
      1_000,
    );
    expect(up).toEqual({ state: 'CONNECTED' });
    expect(old).toMatchObject({ state: 'TERMINATED', reason: expect.stringContaining('stale') });
    expect(missing).toMatchObject({ state: 'TERMINATED', reason: expect.stringContaining('ENOENT') });
  });

  it('asks `state` on the management socket, reads up to END, says quit; a silent or absent socket is TERMINATED', async () => {
    const connected = await management(fixture('state-connected.txt').replace(/\n/g, '\r\n'));
    const reconnecting = await management(fixture('state-reconnecting.txt'));
    const silent = await management(undefined);
    const checks = await checkTunnels(
      [connected.socket, reconnecting.socket, silent.socket, path.join(dir, 'none.sock')].map((socket) => ({
        ...key,
        type: 'openvpn' as const,
        management: socket,
      })),
      500,
    );
    expect(checks[0]).toEqual({ state: 'CONNECTED' });
    expect(checks[1]).toMatchObject({ state: 'TERMINATED', reason: expect.stringContaining('AUTH') });
    expect(checks[2]).toMatchObject({ state: 'TERMINATED', reason: expect.stringContaining('in time') });
    expect(checks[3]).toMatchObject({ state: 'TERMINATED', reason: expect.stringContaining('ENOENT') });
    await expect.poll(() => connected.said.join('')).toBe('state\nquit\n');
  });
});
