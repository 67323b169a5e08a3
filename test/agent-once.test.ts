import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_TEMPORARY, ONCE_DEADLINE_MS, sendOnce } from '../src/agent/once.js';
import type { SendOutcome } from '../src/agent/sender.js';
import { AgentProcess, FakeDevice } from './support/agent-process.js';
import { startTestApp, type TestApp } from './support/harness.js';

const run = promisify(execFile);
const quiet = { info() {}, warn() {}, error() {} };

describe('edgewatch agent --once', () => {
  let t: TestApp;
  let server: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  }, 30_000);
  afterAll(() => t.close());

  it('sends one report and exits 0; exits 78 once the token is revoked', async () => {
    const device = new FakeDevice();
    try {
      const created = await t.request('POST', '/api/v1/node', { body: { name: 'once-1' } });
      fs.writeFileSync(device.tokenFile, created.body.token as string);
      const env = { EDGEWATCH_SERVER: server, EDGEWATCH_TOKEN_FILE: device.tokenFile };
      const sent = new AgentProcess(device, ['--once'], { ...env, STATE_DIRECTORY: device.stateDir });
      expect(await sent.exited, sent.log).toBe(0);
      const node = await t.request('GET', `/api/v1/node/${created.body.id as string}`);
      expect(node.body.status.node.info.version.software_version).toBe('Edge OS 4.2');
      expect((await t.request('POST', `/api/v1/node/${created.body.id as string}/token`)).status).toBe(200);
      const refused = new AgentProcess(device, ['--once'], { ...env, STATE_DIRECTORY: device.stateDir });
      expect(await refused.exited, refused.log).toBe(78);
      expect(refused.log).toContain(device.tokenFile);
    } finally {
      device.remove();
    }
  }, 30_000);

  it('gives up with 75 when the server cannot be reached within 30 s', async () => {
    let now = 0;
    const waits: number[] = [];
    const unreachable: SendOutcome = { kind: 'retry', why: 'ECONNREFUSED', afterMs: undefined };
    let requests = 0;
    const code = await sendOnce(
      {
        settings: {
          server,
          tokenFile: 'token',
          checkSeconds: 10,
          heartbeatSeconds: undefined,
          maxBackoffSeconds: 8,
        },
        probe: async () => ({}),
        send: async () => ((requests += 1), unreachable),
        readToken: () => 'token',
        log: quiet,
        random: () => 0.99,
      },
      { now: () => now, sleep: async (ms) => (waits.push(ms), (now += ms)) },
    );
    expect(code).toBe(EXIT_TEMPORARY);
    expect(now).toBeLessThanOrEqual(ONCE_DEADLINE_MS);
    expect(requests).toBe(waits.length + 1);
    // Full jitter under a doubling ceiling: 1, 2, 4, 8 s at most, then the cap.
    expect(waits.slice(0, 4).map((ms) => Math.ceil(ms / 1000))).toEqual([1, 2, 4, 8]);
  });

  it('--once --dry-run from the built single file, in a directory without node_modules, prints the report', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgewatch-agent-bundle-'));
    try {
      await run(process.execPath, [
        ...['node_modules/vite/bin/vite.js', 'build', '--config', 'src/agent/build/vite.config.ts'],
        ...['--outDir', dir, '--logLevel', 'error'],
      ]);
      const bundle = path.join(dir, 'edgewatch-agent.mjs');
      const { stdout } = await run(process.execPath, [bundle, '--once', '--dry-run'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '' },
      });
      const report = JSON.parse(stdout) as { addresses?: { type: string }[]; software_version?: string };
      expect(report.addresses?.[0]?.type).toBe('InternalIP');
      expect(report.software_version).toBeTruthy();
      expect(fs.readdirSync(dir)).toEqual(['edgewatch-agent.mjs']);
      // No token, no server: nothing is sent, and a usage error is 64.
      await expect(run(process.execPath, [bundle, '--dry-run'], { cwd: dir })).rejects.toMatchObject({
        code: 64,
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
