import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDatabase, type SeededDatabase } from '../bench/notify/seed.js';
import {
  assertConsoleBuilt,
  launchBrowser,
  openPage,
  RESULTS_DIR,
  settled,
  signInWithKey,
  WAIT_MS,
} from './support/browser.js';
import { createTestDatabase, dialect, type TestDatabase } from './support/database.js';
import { serviceDatabaseUrl } from './support/service-env.js';
import { Server, STOP_TIMEOUT_MS } from './support/service-process.js';

// The console's Fleet page over 100,000 nodes, written straight into the database as the notification
// bench does. How long its first page takes is measured and printed, never asserted (timed tests only
// measure); what it shows is asserted.

const NODES = 100_000;
/** Full page loads measured; the figure printed is their median. */
const LOADS = 3;
/** API calls timed per URL; their median is kept. */
const CALLS = 5;

let database: TestDatabase;
let seeded: SeededDatabase;
let server: Server;
let browser: Browser;

beforeAll(async () => {
  assertConsoleBuilt();
  database = await createTestDatabase();
  [seeded] = await Promise.all([
    seedDatabase(serviceDatabaseUrl(database), NODES),
    launchBrowser().then((launched) => (browser = launched)),
  ]);
  server = await new Server({
    DATABASE_URL: serviceDatabaseUrl(database),
    SECRET_KEY: seeded.secretKey,
    // The seeded nodes reported "now": none may fall silent while the page is measured.
    NODE_HEARTBEAT_TIMEOUT_S: '3600',
  }).started();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server?.running) expect(await server.stop()).toBe(0);
  await database?.drop();
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The median time of CALLS answers to GET path, from this process (the page asks the same). */
async function timedGet(path: string): Promise<{ ms: number; total: number }> {
  const times: number[] = [];
  let total = -1;
  for (let i = 0; i < CALLS; i += 1) {
    const started = performance.now();
    const res = await fetch(server.baseUrl + path, {
      headers: { 'x-api-key': seeded.adminKey },
      signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
    });
    const body = (await res.json()) as { total_count: number };
    times.push(performance.now() - started);
    expect(res.status, path).toBe(200);
    total = body.total_count;
  }
  return { ms: Math.round(median(times) * 10) / 10, total };
}

describe('the Fleet page with 100,000 nodes', () => {
  it('shows its first 25 nodes and the total; the time to the first page is printed', async () => {
    const { page, problems } = await openPage(browser);
    await signInWithKey(page, server.baseUrl, seeded.adminKey);
    await page.goto(`${server.baseUrl}/#/fleet`);

    // Each load is a whole new document (the key stays in this tab's sessionStorage); the console marks
    // `fleet-first-page` when the node table's first page has rendered, in ms since navigation start.
    const samples: number[] = [];
    for (let load = 0; load < LOADS; load += 1) {
      await page.reload();
      await expect
        .poll(() => page.evaluate(() => performance.getEntriesByName('fleet-first-page').length), {
          timeout: WAIT_MS,
        })
        .toBe(1);
      samples.push(await page.evaluate(() => performance.getEntriesByName('fleet-first-page')[0]!.startTime));
    }

    await settled(page, 'Fleet');
    const table = page.getByRole('table', { name: 'Nodes' });
    expect(await table.locator('tbody tr').count()).toBe(25);
    expect(await page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('1–25 of 100,000');
    const counts = page.getByRole('list', {
      name: 'Nodes by state, and tunnels and services whose state is unknown',
    });
    await expect
      .poll(() => counts.textContent(), { timeout: WAIT_MS })
      .toBe('100,000alive0unreachable0new0tunnels unknown0services unknown');
    expect(problems).toEqual([]);

    const api = {
      list: await timedGet('/api/v2/node?page=0&size=25'),
      alive: await timedGet('/api/v2/node?node_state=ALIVE&page=0&size=1'),
      unreachable: await timedGet('/api/v2/node?node_state=UNREACHABLE&page=0&size=1'),
      new: await timedGet('/api/v2/node?node_state=NEW&page=0&size=1'),
    };
    expect(api.list.total).toBe(NODES);
    expect(api.alive.total).toBe(NODES);

    const firstPageMs = Math.round(median(samples));
    console.log(`fleet first page with 100,000 nodes: ${firstPageMs} ms (${dialect})`);
    console.log(
      `  loads ${samples.map((ms) => Math.round(ms)).join(', ')} ms; API medians: list ${api.list.ms} ms, ` +
        `ALIVE count ${api.alive.ms} ms, UNREACHABLE count ${api.unreachable.ms} ms, NEW count ${api.new.ms} ms ` +
        `(seeded in ${Math.round(seeded.ms)} ms)`,
    );
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(
      join(RESULTS_DIR, `fleet-first-page-${dialect}.json`),
      `${JSON.stringify(
        {
          dialect,
          nodes: NODES,
          first_page_ms: firstPageMs,
          loads_ms: samples.map((ms) => Math.round(ms)),
          api_median_ms: {
            'GET /api/v2/node?page=0&size=25': api.list.ms,
            'GET /api/v2/node?node_state=ALIVE&size=1': api.alive.ms,
            'GET /api/v2/node?node_state=UNREACHABLE&size=1': api.unreachable.ms,
            'GET /api/v2/node?node_state=NEW&size=1': api.new.ms,
          },
          seed_ms: Math.round(seeded.ms),
          measured_at: new Date().toISOString(),
        },
        null,
        2,
      )}\n`,
    );
  }, 90_000);
});

describe('the node picker with 100,000 nodes', () => {
  it('finds a node by part of its name as it is typed, and sends its id', async () => {
    const { page, problems } = await openPage(browser);
    await signInWithKey(page, server.baseUrl, seeded.adminKey);
    await page.goto(`${server.baseUrl}/#/silences`);
    await settled(page, 'Maintenance windows');
    await page.getByRole('button', { name: 'Plan a window' }).click();
    const form = page.getByRole('dialog', { name: 'Plan a maintenance window' });
    const picker = form.getByRole('combobox', { name: 'Only this node (optional)' });
    await picker.fill('node-9999');
    // notify-node-9999, notify-node-99990 … 99999: eleven match; the first eight are offered.
    const options = form.getByRole('listbox').getByRole('option');
    await expect
      .poll(() => form.getByRole('status').textContent(), { timeout: WAIT_MS })
      .toBe('3 more: type to narrow.');
    expect(await options.count()).toBe(8);
    expect(await options.first().textContent()).toMatch(/^notify-node-9999 /);
    await picker.fill('notify-node-54321');
    await expect
      .poll(() => options.allTextContents(), { timeout: WAIT_MS })
      .toEqual([expect.stringMatching(/^notify-node-54321 /)]);
    await picker.press('Enter');
    expect(await picker.inputValue()).toBe('notify-node-54321');
    const chosen = await form.locator('input[type="hidden"][name="node_id"]').inputValue();
    const node = await fetch(`${server.baseUrl}/api/v1/node/${chosen}`, {
      headers: { 'x-api-key': seeded.adminKey },
    });
    expect(((await node.json()) as { name: string }).name).toBe('notify-node-54321');
    expect(problems).toEqual([]);
  }, 60_000);
});
