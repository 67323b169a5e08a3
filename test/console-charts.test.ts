import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { samplePayload } from '../src/features/notifications/payload.js';
import { newId } from '../src/lib/ids.js';
import { checkAndPhotograph, openPage, screenshot, settled, type TestPage } from './support/browser.js';
import { webhookNotification } from './support/notifications.js';
import { startConsoleService, type ConsoleService } from './support/console-service.js';
import type { Server } from './support/service-process.js';

// The pictures of the Fleet, node and Notifications pages, drawn from a known past: three nodes of ten
// unreachable for half an hour, a gap of ten minutes, a node down two hours of the last day, notifications
// every few minutes. Each chart must draw on its canvas and say its data in words, in both colour schemes.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let service: ConsoleService;
let server: Server;
let browser: Browser;
let ctx: AppContext;
let adminKey: string;
let nodeId: string;
const opened: TestPage[] = [];

const call = (path: string, body?: unknown) => service.call(path, body);

async function seedHistory(orgId: string, until: number) {
  const last = Math.floor(until / MINUTE) * MINUTE - 2 * MINUTE;
  for (let minute = last - 3 * HOUR; minute <= last; minute += MINUTE) {
    const ago = last - minute;
    if (ago >= 110 * MINUTE && ago < 120 * MINUTE) continue;
    const unreachable = ago >= 60 * MINUTE && ago < 90 * MINUTE ? 3 : 0;
    await ctx.db.insertInto('fleet_history_minutes').values({ minute }).execute();
    await ctx.db
      .insertInto('fleet_history')
      .values({
        org_id: orgId,
        minute,
        nodes_alive: 10 - unreachable,
        nodes_unreachable: unreachable,
        nodes_new: 1,
        tunnels_unhealthy: 1,
        tunnels_unknown: unreachable,
        services_unhealthy: 2,
        services_unknown: 2 * unreachable,
      })
      .execute();
  }
}

async function seedNode(now: number) {
  const node = await call('/api/v1/node', { name: 'edge-charts' });
  nodeId = node.id as string;
  const report = await fetch(`${server.baseUrl}/api/v1/agent/report`, {
    method: 'POST',
    headers: { 'x-node-token': node.token as string },
  });
  expect(report.status).toBe(200);
  await ctx.db
    .updateTable('nodes')
    .set({ created_at: now - 26 * HOUR })
    .where('id', '=', nodeId)
    .execute();
  await ctx.db
    .updateTable('fleet_events')
    .set({ occurred_at: now - 25 * HOUR })
    .where('node_id', '=', nodeId)
    .execute();
  const [first] = await ctx.db.selectFrom('fleet_events').selectAll().where('node_id', '=', nodeId).execute();
  const change = (at: number, previous: string, current: string, sequence: number) => ({
    ...first!,
    id: newId(at),
    condition: current,
    previous_state: previous,
    current_state: current,
    sequence,
    occurred_at: at,
    detected_at: at,
  });
  await ctx.db
    .insertInto('fleet_events')
    .values([
      change(now - 10 * HOUR, 'ALIVE', 'UNREACHABLE', 100),
      change(now - 8 * HOUR, 'UNREACHABLE', 'ALIVE', 101),
    ])
    .execute();
}

async function seedNotifications(userId: string, orgId: string, now: number) {
  const hook = await call('/api/v1/webhook', { name: 'Charts', url: 'https://hooks.example.com/charts' });
  for (let i = 0; i < 90; i += 1) {
    const at = now - 3 * HOUR + i * 2 * MINUTE;
    const id = `chart-${i}`;
    const failed = i % 9 === 0;
    await ctx.db
      .insertInto('notifications')
      .values({
        ...webhookNotification({
          id,
          userId,
          orgId,
          webhookId: hook.id as string,
          status: failed ? 'failed' : 'delivered',
          alertName: 'Charts',
          now: at,
        }),
        payload: JSON.stringify(
          samplePayload('NODE_STATE_CHANGE', {
            eventId: newId(at),
            occurredAt: at,
            organization: { id: orgId, name: 'Root organization' },
          }),
        ),
      })
      .execute();
    await ctx.db
      .insertInto('deliveries')
      .values({
        id: `d-${id}`,
        notification_id: id,
        webhook_id: hook.id as string,
        status: failed ? 'failed' : 'delivered',
        attempts: 1,
        last_attempt_at: at,
        next_attempt_at: null,
        lease_until: null,
        last_status_code: failed ? 500 : 200,
        last_error: null,
        created_at: at,
        delivered_at: failed ? null : at + 150 + (i % 10) * 90,
        // A success is kept on the row, as the service keeps it; a failure is a row of the attempt log.
        success_duration_ms: failed ? null : 150 + (i % 10) * 90,
        success_response: null,
      })
      .execute();
    if (!failed) continue;
    await ctx.db
      .insertInto('delivery_attempts')
      .values({
        id: `a-${id}`,
        delivery_id: `d-${id}`,
        at,
        duration_ms: 150 + (i % 10) * 90,
        status_code: failed ? 500 : 200,
        failure: failed ? 'bad_status' : null,
        error: null,
        response: null,
      })
      .execute();
  }
}

beforeAll(async () => {
  service = await startConsoleService('charts', {
    // The node reported once: it must not fall silent while the pages are looked at.
    NODE_HEARTBEAT_TIMEOUT_S: '3600',
  });
  ({ server, browser, ctx, adminKey } = service);

  const now = Date.now();
  const me = await call('/api/v1/user/me');
  await seedHistory(me.org_id as string, now);
  await seedNode(now);
  await seedNotifications(me.id as string, me.org_id as string, now);
}, 120_000);

afterAll(async () => {
  await service?.close();
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((test) => test.context.close()));
});

async function signedIn(path: string, heading: string | RegExp): Promise<TestPage> {
  const test = await openPage(browser, { signedInWith: adminKey });
  opened.push(test);
  await test.page.goto(`${server.baseUrl}/#${path}`);
  await settled(test.page, heading);
  return test;
}

/** Every chart of the page has drawn its canvas. */
async function drawn(page: Page, charts: number) {
  await expect.poll(() => page.locator('.chart-canvas canvas').count()).toBe(charts);
}

/** The summary line of one series of a chart. */
const summaryOf = (page: Page, chart: string, series: string) =>
  page.getByRole('figure', { name: chart }).locator(`li[data-series="${series}"]`).innerText();

/** A dark screenshot beside the light ones checkAndPhotograph takes. */
async function photographDark(page: Page, name: string) {
  await page.emulateMedia({ colorScheme: 'dark' });
  await screenshot(page, `${name}-dark`);
  await page.emulateMedia({ colorScheme: 'light' });
}

describe('the charts', () => {
  it(
    'Fleet: nodes by state and unhealthy tunnels and services over 24 h, said in words too',
    { timeout: 120_000 },
    async () => {
      const { page, problems } = await signedIn('/fleet', 'Fleet');
      await drawn(page, 2);
      expect(await summaryOf(page, 'Nodes by state', 'Unreachable')).toBe('Unreachable: 0 now, highest 3');
      expect(await summaryOf(page, 'Tunnels and services not healthy', 'Services unknown')).toContain(
        'highest 6',
      );
      // The table under "Data" has a row per minute known: three hours less the ten-minute gap, and more.
      const rows = await page.getByRole('figure', { name: 'Nodes by state' }).locator('tbody tr').count();
      expect(rows).toBeGreaterThanOrEqual(170);
      await checkAndPhotograph(page, 'fleet-charts');
      await photographDark(page, 'fleet-charts');

      await page.getByRole('radio', { name: 'Last 7 days' }).check();
      await expect
        .poll(() => page.getByRole('figure', { name: 'Nodes by state' }).locator('figcaption').innerText())
        .toContain('last 7 days');
      await drawn(page, 2);
      expect(await summaryOf(page, 'Nodes by state', 'Unreachable')).toBe('Unreachable: 0 now, highest 3');
      expect(problems).toEqual([]);
    },
  );

  it(
    "Node: the availability strip and the node's uptime over the last day",
    { timeout: 120_000 },
    async () => {
      const { page, problems } = await signedIn(`/nodes/${nodeId}`, 'edge-charts');
      const figure = page.getByRole('figure', { name: 'Availability' });
      await expect
        .poll(() => figure.locator('figcaption').innerText())
        .toBe('Uptime 91.67 % over the last 24 hours; unreachable 1 time, 2 h in all.');
      expect(await figure.locator('rect').count()).toBe(4);
      expect(await figure.locator('tbody tr').count()).toBe(3);
      await checkAndPhotograph(page, 'node-availability');
      await photographDark(page, 'node-availability');
      await page.getByRole('radio', { name: 'Last 7 days' }).check();
      await expect.poll(() => figure.locator('figcaption').innerText()).toContain('over the last 7 days');
      expect(problems).toEqual([]);
    },
  );

  it(
    'Notifications: per minute by status, and the delivery latency at p50 and p95',
    { timeout: 120_000 },
    async () => {
      const { page, problems } = await signedIn('/notifications', 'Notifications');
      await drawn(page, 2);
      expect(await summaryOf(page, 'Notifications by status', 'Failed')).toContain('highest 1');
      expect(await summaryOf(page, 'Delivery latency', 'p95')).toMatch(/^p95: \d+ ms now, highest 960 ms$/);
      await expect.poll(() => page.locator('.loading').count()).toBe(0);
      await checkAndPhotograph(page, 'notifications-charts');
      await photographDark(page, 'notifications-charts');
      expect(problems).toEqual([]);
    },
  );
});
