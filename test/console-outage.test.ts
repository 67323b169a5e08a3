import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { SimulatedAgent } from '../src/simulator/agent.js';
import { checkAndPhotograph, openPage, settled, WAIT_MS } from './support/browser.js';
import { startConsoleService, type ConsoleService } from './support/console-service.js';
import { bounded, type Server, STOP_TIMEOUT_MS } from './support/service-process.js';

// An outage as an operator meets it: a simulated fleet of twenty reporting nodes, healthy for the half hour
// before, of which six (30 %) stop. The Fleet page must put them first, grey what they last said about their
// tunnels and services, and draw the unreachable nodes rising at the history chart's edge.

const MINUTE = 60_000;
const NODES = 20;
const STOPPED = [3, 6, 9, 12, 15, 18];
const nameOf = (i: number) => `outage-node-${i}`;

let service: ConsoleService;
let server: Server;
let browser: Browser;
let ctx: AppContext;
let adminKey: string;

const call = (path: string, body?: unknown) => service.call(path, body);

/** The half hour before the test: twenty nodes, all ALIVE, a snapshot each minute. */
async function seedHealthyPast(orgId: string, now: number) {
  const last = Math.floor(now / MINUTE) * MINUTE - MINUTE;
  for (let minute = last - 30 * MINUTE; minute <= last; minute += MINUTE) {
    await ctx.db
      .insertInto('fleet_history_minutes')
      .values({ minute })
      .onConflict((c) => c.doNothing())
      .execute();
    await ctx.db
      .insertInto('fleet_history')
      .values({
        org_id: orgId,
        minute,
        nodes_alive: NODES,
        nodes_unreachable: 0,
        nodes_new: 0,
        tunnels_unhealthy: 0,
        tunnels_unknown: 0,
        services_unhealthy: 0,
        services_unknown: 0,
      })
      .onConflict((c) => c.doNothing())
      .execute();
  }
}

/** Every agent whose node is not stopped reports, well inside the heartbeat timeout, until stopped. */
function reportLoop(agents: Map<number, SimulatedAgent>) {
  const failures: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const agent of agents.values()) {
        const res = await fetch(`${server.baseUrl}/api/v1/agent/report`, {
          method: 'POST',
          headers: { 'x-node-token': agent.node.token, 'content-type': 'application/json' },
          body: JSON.stringify(agent.nextReport()),
          signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
        });
        if (res.status === 200) agent.accepted();
        else failures.push(`${res.status} ${await res.text()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
  })();
  return {
    failures,
    async stop() {
      stopped = true;
      await bounded(loop, STOP_TIMEOUT_MS, 'the end of the report loop');
    },
  };
}

const countOf = async (state: string) =>
  (await call(`/api/v2/node?node_state=${state}&size=1`)).total_count as number;

beforeAll(async () => {
  service = await startConsoleService('outage', {
    // Short, so that a stopped node is UNREACHABLE within seconds.
    NODE_REPORT_INTERVAL_S: '1',
    NODE_HEARTBEAT_TIMEOUT_S: '3',
    JOB_POLL_INTERVAL_MS: '250',
  });
  ({ server, browser, ctx, adminKey } = service);
}, 120_000);

afterAll(async () => {
  await service?.close();
});

describe('an outage of 30 % of the fleet', () => {
  it('shows the stopped nodes first, their tunnels and services greyed, and the history rising', async () => {
    const me = await call('/api/v1/user/me');
    await seedHealthyPast(me.org_id as string, Date.now());
    const agents = new Map<number, SimulatedAgent>();
    for (let i = 1; i <= NODES; i += 1) {
      const node = await call('/api/v1/node', { name: nameOf(i) });
      agents.set(
        i,
        new SimulatedAgent({ index: i, id: node.id, name: nameOf(i), token: node.token }, undefined, 0),
      );
    }
    const reports = reportLoop(agents);
    try {
      await expect.poll(() => countOf('ALIVE'), { timeout: WAIT_MS }).toBe(NODES);
      for (const i of STOPPED) agents.delete(i);
      await expect.poll(() => countOf('UNREACHABLE'), { timeout: WAIT_MS }).toBe(STOPPED.length);

      const { page, problems } = await openPage(browser, { signedInWith: adminKey });
      await page.goto(`${server.baseUrl}/#/fleet`);
      await settled(page, 'Fleet');
      // Problems first: the six silent nodes lead, then the rest, each in natural order of silence.
      const rows = page.getByRole('table', { name: 'Nodes' }).locator('tbody tr');
      await expect.poll(() => rows.count(), { timeout: WAIT_MS }).toBe(NODES);
      const states = await rows.locator('td:nth-child(2)').allInnerTexts();
      expect(states.map((state) => state.trim())).toEqual([
        ...STOPPED.map(() => 'UNREACHABLE'),
        ...Array.from({ length: NODES - STOPPED.length }, () => 'ALIVE'),
      ]);
      const leading = await rows.locator('a.name').allInnerTexts();
      expect(leading.slice(0, STOPPED.length).sort()).toEqual(STOPPED.map(nameOf).sort());
      // What a silent node last said about its tunnels and services is greyed as unknown, never as healthy.
      const first = rows.first();
      expect(await first.locator('.stale').count()).toBe(2);
      expect(await first.locator('.stale').first().innerText()).toMatch(
        /^unknown \(last known 1\/1 connected\)$/,
      );
      expect(await rows.last().locator('.stale').count()).toBe(0);
      const counts = page.getByRole('list', {
        name: 'Nodes by state, and tunnels and services whose state is unknown',
      });
      await expect
        .poll(() => counts.textContent(), { timeout: WAIT_MS })
        .toContain(`${STOPPED.length}unreachable`);

      // The history: none unreachable through the healthy half hour, six at its edge now.
      const chart = page.getByRole('figure', { name: 'Nodes by state' });
      await expect
        .poll(() => chart.locator('li[data-series="Unreachable"]').innerText(), { timeout: WAIT_MS })
        .toBe(`Unreachable: ${STOPPED.length} now, highest ${STOPPED.length}`);
      const headers = await chart.locator('thead th').allTextContents();
      const column = headers.indexOf('Unreachable');
      const unreachable = await chart.locator(`tbody tr td:nth-of-type(${column})`).allTextContents();
      expect(unreachable[0]).toBe('0');
      expect(unreachable.at(-1)).toBe(String(STOPPED.length));

      await checkAndPhotograph(page, 'outage');
      expect(problems).toEqual([]);
      await page.context().close();
    } finally {
      await reports.stop();
    }
    expect(reports.failures).toEqual([]);
  }, 120_000);
});
