import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertConsoleBuilt, launchBrowser, openPage, settled, WAIT_MS } from './support/browser.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { serviceEnv } from './support/service-env.js';
import { bounded, Server, STOP_TIMEOUT_MS } from './support/service-process.js';

// The Fleet page's order in a real browser against `edgewatch serve`: problems first by default, and every
// column the API can order by sorts from its header, kept in the URL.

/** Short, so that a node that reported once is UNREACHABLE within seconds. */
const HEARTBEAT_TIMEOUT_S = 3;

let database: TestDatabase;
let server: Server;
let browser: Browser;
let adminKey: string;
let reporting = true;
let reports: Promise<void> | undefined;

async function call(path: string, body?: unknown, token?: string) {
  const res = await fetch(server.baseUrl + path, {
    method: body === undefined && token === undefined ? 'GET' : 'POST',
    headers: {
      ...(token === undefined ? { 'x-api-key': adminKey } : { 'x-node-token': token }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
  });
  const text = await res.text();
  expect(res.status, `${path}: ${text}`).toBeLessThan(300);
  return JSON.parse(text);
}

const register = async (name: string) => (await call('/api/v1/node', { name })).token as string;
const report = (token: string) => call('/api/v1/agent/report', undefined, token);

beforeAll(async () => {
  assertConsoleBuilt();
  database = await createTestDatabase();
  server = new Server({ ...serviceEnv(database), NODE_HEARTBEAT_TIMEOUT_S: String(HEARTBEAT_TIMEOUT_S) });
  await Promise.all([server.started(), launchBrowser().then((launched) => (browser = launched))]);
  [adminKey] = server.printedKeys() as [string];
  // node-10 reports once and falls silent; node-2 never reports; node-1 and node-100 keep reporting.
  await report(await register('node-10'));
  await register('node-2');
  const alive = await Promise.all(['node-1', 'node-100'].map(register));
  reports = (async () => {
    while (reporting) {
      await Promise.all(alive.map(report));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
  })();
}, 60_000);

afterAll(async () => {
  reporting = false;
  if (reports) await bounded(reports, STOP_TIMEOUT_MS, 'the end of the reports');
  await browser?.close();
  if (server?.running) expect(await server.stop()).toBe(0);
  await database?.drop();
});

const table = (page: Page) => page.getByRole('table', { name: 'Nodes' });
const names = (page: Page) => table(page).locator('tbody a.name').allTextContents();
const header = (page: Page, name: string) => table(page).getByRole('columnheader', { name });

/** Presses a column's header and waits for the rows to read `expected`. */
async function sortBy(page: Page, column: string, expected: string[]) {
  await header(page, column).getByRole('button').click();
  await expect.poll(() => names(page), { timeout: WAIT_MS }).toEqual(expected);
}

describe('the Fleet page’s order', () => {
  it('shows problems first, and sorts by each column from its header, ascending, descending, then back', async () => {
    await expect
      .poll(async () => (await call('/api/v2/node?node_state=UNREACHABLE')).total_count, {
        timeout: (HEARTBEAT_TIMEOUT_S + 10) * 1000,
      })
      .toBe(1);
    const { page, problems } = await openPage(browser, { signedInWith: adminKey });
    await page.goto(`${server.baseUrl}/#/fleet`);
    await settled(page, 'Fleet');
    // UNREACHABLE, then NEW, then the ALIVE ones (whichever was silent longer first).
    await expect
      .poll(async () => (await names(page)).slice(0, 2), { timeout: WAIT_MS })
      .toEqual(['node-10', 'node-2']);
    // Every column but the selection's sorts.
    for (const column of ['State', 'Name', 'Organization', 'Last seen', 'Version', 'Tunnels', 'Services'])
      expect(await header(page, column).getAttribute('aria-sort'), column).toBe('none');
    expect(await table(page).getByRole('columnheader', { name: 'Select' }).getAttribute('aria-sort')).toBe(
      null,
    );

    await sortBy(page, 'Name', ['node-1', 'node-2', 'node-10', 'node-100']);
    expect(await header(page, 'Name').getAttribute('aria-sort')).toBe('ascending');
    expect(page.url()).toContain('sort=name');
    await sortBy(page, 'Name', ['node-100', 'node-10', 'node-2', 'node-1']);
    expect(await header(page, 'Name').getAttribute('aria-sort')).toBe('descending');
    expect(page.url()).toContain('sort=-name');

    // Kept in the URL: a reload shows the same order.
    await page.reload();
    await settled(page, 'Fleet');
    await expect
      .poll(() => names(page), { timeout: WAIT_MS })
      .toEqual(['node-100', 'node-10', 'node-2', 'node-1']);

    // A third press goes back to the default, problems first.
    await header(page, 'Name').getByRole('button').click();
    await expect
      .poll(async () => (await names(page)).slice(0, 2), { timeout: WAIT_MS })
      .toEqual(['node-10', 'node-2']);
    expect(page.url()).not.toContain('sort=');
    expect(await header(page, 'Name').getAttribute('aria-sort')).toBe('none');

    // State: ALIVE, NEW, UNREACHABLE, by name within a state.
    await sortBy(page, 'State', ['node-1', 'node-100', 'node-2', 'node-10']);
    expect(await header(page, 'State').getAttribute('aria-sort')).toBe('ascending');
    // Last seen, ascending: never seen first, then the longest silent.
    await header(page, 'Last seen').getByRole('button').click();
    await expect
      .poll(async () => (await names(page)).slice(0, 2), { timeout: WAIT_MS })
      .toEqual(['node-2', 'node-10']);
    expect(await header(page, 'Last seen').getAttribute('aria-sort')).toBe('ascending');
    expect(await header(page, 'State').getAttribute('aria-sort')).toBe('none');
    // Tunnels: the fewest down first (none has any here), then by name.
    await sortBy(page, 'Tunnels', ['node-1', 'node-2', 'node-10', 'node-100']);
    expect(await header(page, 'Tunnels').getAttribute('aria-sort')).toBe('ascending');
    expect(page.url()).toContain('sort=tunnels');
    expect(problems).toEqual([]);
  }, 60_000);
});
