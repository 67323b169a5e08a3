import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../src/cli/program.js';
import { SOFTWARE_VERSION } from '../src/simulator/agent.js';
import { parseSimulateOptions } from '../src/simulator/options.js';
import { simulate } from '../src/simulator/simulate.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { ADMIN_KEY } from './support/harness.js';
import { serviceEnv } from './support/service-env.js';
import { bounded, program, Server, START_TIMEOUT_MS, STOP_TIMEOUT_MS } from './support/service-process.js';

// `edgewatch simulate` against the real service, `edgewatch serve` in a process of its own.

let database: TestDatabase;
let server: Server;

beforeAll(async () => {
  database = await createTestDatabase();
  server = await new Server({ ...serviceEnv(database), BOOTSTRAP_API_KEY: ADMIN_KEY }).started();
});
afterAll(async () => {
  if (server?.running) expect(await server.stop()).toBe(0);
  await database?.drop();
});

interface NodeAnswer {
  id: string;
  name: string;
  hardware_serial_number: string;
  node_state: string;
  status: { node: { addresses: unknown[]; info: { version: { software_version: string | null } } } };
  tunnels: Record<string, number>;
  services: Record<string, number>;
}

async function get(path: string): Promise<any> {
  const res = await server.fetch(path, ADMIN_KEY);
  expect(res.status, path).toBe(200);
  return res.json();
}

const simulatedNodes = async (): Promise<NodeAnswer[]> =>
  (await get('/api/v2/node?search=sim-&size=100')).results;

const events = async (type: string): Promise<{ node: { id: string }; condition: string }[]> =>
  (await get(`/api/v2/event?type=${type}&size=100`)).results;

/** Polls until `check` holds; fails after `ms` with what was awaited and `context()`. */
async function eventually(what: string, check: () => Promise<boolean>, context: () => string, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms:\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function cli(argv: string[], env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (line) => out.push(line), err: (line) => err.push(line), env };
  return { code: await runCli(argv, io), out, err };
}

describe('edgewatch simulate', () => {
  it('registers its nodes, which report until Ctrl-C: ALIVE, with their tunnels, services and events', async () => {
    const child = program(
      ['simulate', '--url', server.baseUrl, '--nodes', '3', '--interval', '0.5', '--flap-rate', '0'],
      { EDGEWATCH_API_KEY: ADMIN_KEY },
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await eventually(
        'three ALIVE simulated nodes',
        async () => {
          const nodes = await simulatedNodes();
          return nodes.length === 3 && nodes.every((node) => node.node_state === 'ALIVE');
        },
        () => stderr,
        START_TIMEOUT_MS,
      );
      child.kill('SIGINT');
      expect(await bounded(exited, STOP_TIMEOUT_MS, 'exit after SIGINT'), stderr).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(stderr).toContain('3 nodes ready (0 reused with new tokens, 3 registered)');
    expect(stdout).toMatch(
      /^Simulated 3 nodes for [\d.]+ s: \d+ reports? \([\d.]+\/s\), errors 0, \d+ missed/,
    );

    const nodes = await simulatedNodes();
    expect(nodes.map((node) => [node.name, node.hardware_serial_number, node.node_state])).toEqual([
      ['sim-node-1', 'sim-1', 'ALIVE'],
      ['sim-node-2', 'sim-2', 'ALIVE'],
      ['sim-node-3', 'sim-3', 'ALIVE'],
    ]);
    for (const node of nodes) {
      expect(node.status.node.addresses).toHaveLength(2);
      expect(node.status.node.info.version.software_version).toBe(SOFTWARE_VERSION);
      expect(node.tunnels.CONNECTED).toBe(2);
      expect(node.services.HEALTHY).toBe(3);
    }
    const alive = await events('NODE_STATE_CHANGE');
    expect(alive.map((event) => event.condition)).toEqual(['ALIVE', 'ALIVE', 'ALIVE']);
    expect(new Set(alive.map((event) => event.node.id))).toEqual(new Set(nodes.map((node) => node.id)));
    // Each node's mesh tunnel leads to the next simulated node.
    const tunnels: { key: string; node: { id: string }; peer_node_id: string | null }[] = (
      await get('/api/v2/tunnel?size=100')
    ).results;
    const ids = nodes.map((node) => node.id);
    expect(tunnels).toHaveLength(6);
    for (const [i, id] of ids.entries()) {
      const mesh = tunnels.find((tunnel) => tunnel.node.id === id && tunnel.key === 'mesh');
      expect(mesh?.peer_node_id).toBe(ids[(i + 1) % ids.length]);
    }
  }, 60_000);

  it('reuses its nodes on the next run with new tokens, registers only the missing ones, and flaps', async () => {
    const before = await simulatedNodes();
    expect(before).toHaveLength(3);
    const options = parseSimulateOptions(
      { url: server.baseUrl, nodes: '4', interval: '0.4', flapRate: '1', duration: '1.5' },
      { EDGEWATCH_API_KEY: ADMIN_KEY },
    );
    const lines: string[] = [];
    const summary = await simulate(
      options,
      { out: (line) => lines.push(line), progress: { line: (line) => lines.push(line) } },
      new AbortController().signal,
    );
    expect(summary, lines.join('\n')).toMatchObject({ nodes: 4, reused: 3, registered: 1, errors: {} });
    // Node's timers count whole milliseconds of the event loop's clock: one may end up to a millisecond
    // before performance.now() says its time has come.
    expect(summary.seconds).toBeGreaterThanOrEqual(1.5 - 0.002);
    expect(summary.reports).toBeGreaterThanOrEqual(8);
    expect(lines.at(-1)).toMatch(/^Simulated 4 nodes for 1\.\d s: /);

    const after = await simulatedNodes();
    expect(after.map((node) => node.hardware_serial_number)).toEqual(['sim-1', 'sim-2', 'sim-3', 'sim-4']);
    expect(after.slice(0, 3).map((node) => node.id)).toEqual(before.map((node) => node.id));
    expect(after.every((node) => node.node_state === 'ALIVE')).toBe(true);

    // At a flap rate of 1, every tunnel and service that is up goes down on a node's second report.
    const down = (await events('TUNNEL_STATE_CHANGE')).filter((event) => event.condition === 'TERMINATED');
    expect(new Set(down.map((event) => event.node.id))).toEqual(new Set(after.map((node) => node.id)));
    const unwell = (await events('SERVICE_STATE_CHANGE')).filter((event) => event.condition !== 'HEALTHY');
    expect(unwell.length).toBeGreaterThanOrEqual(4 * 3);
  });

  it.each([
    [['--nodes', '0'], '--nodes must be a whole number from 1 to 100000, got "0".'],
    [['--nodes', 'ten'], '--nodes must be a whole number from 1 to 100000, got "ten".'],
    [['--interval', '0'], /^--interval must be a time from 0\.2 s to 86400 s, .*got "0"\.$/],
    [['--interval', '5 minutes'], /^--interval must be .*got "5 minutes"\.$/],
    [['--flap-rate', '1.5'], /^--flap-rate must be a number from 0 to 1 .*got "1\.5"\.$/],
    [['--duration', '-3'], /^--duration must be a positive time .*got "-3"\.$/],
    [
      ['--url', 'ftp://example.com'],
      `--url must be the service's http:// or https:// address, got "ftp://example.com".`,
    ],
    [['--concurrency', '0'], '--concurrency must be a whole number from 1 to 1024, got "0".'],
  ])('refuses %j with exit code 2 and one line', async (argv, message) => {
    const res = await cli(['simulate', ...argv, '--key', ADMIN_KEY]);
    expect(res.code).toBe(2);
    expect(res.out).toEqual([]);
    expect(res.err).toHaveLength(1);
    if (typeof message === 'string') expect(res.err[0]).toBe(message);
    else expect(res.err[0]).toMatch(message);
  });

  it('wants a key, from --key or EDGEWATCH_API_KEY', async () => {
    const res = await cli(['simulate', '--url', server.baseUrl]);
    expect(res).toEqual({ code: 2, out: [], err: ['No API key: pass --key or set EDGEWATCH_API_KEY.'] });
  });

  it('ends with exit code 1 and one line when the key is refused', async () => {
    const res = await cli(['simulate', '--url', server.baseUrl, '--key', 'ew_not-a-key-of-this-service']);
    expect(res.code).toBe(1);
    expect(res.out).toEqual([]);
    expect(res.err).toEqual([expect.stringMatching(/^The service refused the API key \(401\): /)]);
  });

  it('ends with exit code 1 and one line when the service cannot be reached', async () => {
    const port = await closedPort();
    const res = await cli(['simulate', '--url', `http://127.0.0.1:${port}`], {
      EDGEWATCH_API_KEY: ADMIN_KEY,
    });
    expect(res.code).toBe(1);
    expect(res.err).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Cannot reach edgewatch at http://127\\.0\\.0\\.1:${port}/: connection refused .*Is it running\\?$`,
        ),
      ),
    ]);
  });
});

/** A local port nothing listens on (just released by the system). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}
