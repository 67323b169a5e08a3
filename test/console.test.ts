import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedAgent } from '../src/simulator/agent.js';
import {
  anotherPage,
  assertConsoleBuilt,
  axeCheck,
  checkAndPhotograph,
  launchBrowser,
  NARROW,
  openPage,
  screenshot,
  sessionKey,
  settled,
  signInWithKey,
  signInWithPassword,
  WAIT_MS,
  type TestPage,
} from './support/browser.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { serviceEnv } from './support/service-env.js';
import { bounded, Server, STOP_TIMEOUT_MS } from './support/service-process.js';
import { testCertificates } from './support/tls.js';

// The web console in a real browser (Debian's chromium through playwright-core) against the real service,
// `edgewatch serve` in its own process, with the example receiver as the webhook endpoint.

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Short, so that a silent node is UNREACHABLE within seconds (sweep every 3 s, heartbeats flushed each 1 s). */
const HEARTBEAT_TIMEOUT_S = 3;
const NODE_NAME = 'edge-berlin-01';
const WEBHOOK_NAME = 'Receiver';
const ALERT_NAME = 'Node down';
const UNREACHABLE_MESSAGE = `Node ${NODE_NAME} is UNREACHABLE (was ALIVE).`;
/** The text as a pattern that matches it literally, within a longer text. */
const literally = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

let database: TestDatabase;
let server: Server;
let browser: Browser;
let tlsDir: string;
let adminKey: string;
const receivers: ChildProcess[] = [];
const opened: TestPage[] = [];

beforeAll(async () => {
  assertConsoleBuilt();
  database = await createTestDatabase();
  tlsDir = mkdtempSync(join(tmpdir(), 'edgewatch-console-tls-'));
  const certificates = testCertificates();
  writeFileSync(join(tlsDir, 'ca.pem'), certificates.ca);
  writeFileSync(join(tlsDir, 'cert.pem'), certificates.server.cert);
  writeFileSync(join(tlsDir, 'key.pem'), certificates.server.key);
  // Each is kept as soon as it exists, so that a failed start of the other still leaves nothing running.
  server = new Server({
    ...serviceEnv(database),
    NODE_REPORT_INTERVAL_S: '1',
    NODE_HEARTBEAT_TIMEOUT_S: String(HEARTBEAT_TIMEOUT_S),
    NODE_EXTRA_CA_CERTS: join(tlsDir, 'ca.pem'),
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    JOB_POLL_INTERVAL_MS: '250',
  });
  await Promise.all([server.started(), launchBrowser().then((launched) => (browser = launched))]);
  [adminKey] = server.printedKeys() as [string];
  expect(adminKey).toMatch(/^ew_/);
});

afterAll(async () => {
  for (const receiver of receivers) if (receiver.exitCode === null) receiver.kill('SIGKILL');
  await browser?.close();
  if (server?.running) expect(await server.stop()).toBe(0);
  await database?.drop();
  if (tlsDir !== undefined) rmSync(tlsDir, { recursive: true, force: true });
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((test) => test.context.close()));
});

/** A page in a context of its own, closed after the test. */
async function page(options: Parameters<typeof openPage>[1] = {}): Promise<TestPage> {
  const test = await openPage(browser, options);
  opened.push(test);
  return test;
}

/** The console found nothing to complain about in its own console: no uncaught error, no CSP refusal. */
function expectNoProblems(...pages: TestPage[]): void {
  expect(pages.flatMap((test) => test.problems)).toEqual([]);
}

async function call(path: string, init: { method?: string; body?: unknown; key?: string | null } = {}) {
  const key = init.key === undefined ? adminKey : init.key;
  const res = await fetch(server.baseUrl + path, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(key === null ? {} : { 'x-api-key': key }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
  });
  const text = await res.text();
  expect(res.status, `${init.method ?? 'GET'} ${path}: ${text}`).toBeLessThan(300);
  return text === '' ? undefined : JSON.parse(text);
}

/** A user made by the admin through the API, with the e-mail address verified through the link it got. */
async function createVerifiedUser(name: string, email: string, role: string, password: string) {
  const user = await call('/api/v1/user', { body: { name, email, password, roles: [role] } });
  // Without SMTP_URL the service writes each e-mail, link included, to its log.
  const line = await server.waitFor(
    `the verification e-mail to ${email}`,
    (entry) => JSON.stringify(entry).includes(email) && (entry.msg ?? '').includes('verify-email?token='),
    WAIT_MS,
  );
  const token = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(line.msg ?? '')?.[1];
  expect(token).toBeDefined();
  expect((await call(`/api/v1/user/verify-email?token=${token}`, { key: null })).status).toBe('SUCCESS');
  return user as { id: string };
}

// The page's own globals, for the functions that run in it: the test code is type-checked without the DOM's types.
declare const navigator: { clipboard: { readText(): Promise<string> } };

function sections(target: Page) {
  return target.getByRole('navigation', { name: 'Sections' });
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** examples/receiver.mjs as its own process, serving HTTPS with the test CA's certificate for localhost. */
async function startExampleReceiver(port: number, secret: string) {
  const child = spawn(process.execPath, ['examples/receiver.mjs'], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      WEBHOOK_SECRET: secret,
      PORT: String(port),
      TLS_CERT: join(tlsDir, 'cert.pem'),
      TLS_KEY: join(tlsDir, 'key.pem'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  receivers.push(child);
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  await expect
    .poll(() => (child.exitCode === null ? output.stdout : `exited: ${output.stderr}`), { timeout: WAIT_MS })
    .toContain(`receiver listening on port ${port}`);
  return output;
}

/**
 * The node's agent, played by the test: `edgewatch simulate` registers nodes of its own and gives each a
 * new token, so it cannot report with the token the console showed. The bodies are the simulator's.
 */
function reportLoop(token: string, name: string) {
  const agent = new SimulatedAgent({ index: 1, id: '', name, token }, undefined, 0);
  const failures: string[] = [];
  let reports = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const res = await fetch(`${server.baseUrl}/api/v1/agent/report`, {
          method: 'POST',
          headers: { 'x-node-token': token, 'content-type': 'application/json' },
          body: JSON.stringify(agent.nextReport()),
          signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
        });
        const text = await res.text();
        if (res.status === 200) {
          agent.accepted();
          reports += 1;
        } else {
          failures.push(`${res.status} ${text}`);
        }
      } catch (error) {
        failures.push(String(error));
      }
      // Well inside the heartbeat timeout, so the node never looks silent while it reports.
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
  })();
  return {
    failures,
    reports: () => reports,
    async stop() {
      stopped = true;
      await bounded(loop, STOP_TIMEOUT_MS, 'the end of the report loop');
    },
  };
}

describe('signing in', () => {
  it('first sign-in with e-mail and password asks for a new password, then shows the fleet', async () => {
    await createVerifiedUser('Ada Operator', 'ada@example.com', 'operator', 'first-password');
    const test = await page();
    await signInWithPassword(test.page, server.baseUrl, {
      email: 'ada@example.com',
      password: 'first-password',
      newPassword: 'a-better-password',
    });
    await settled(test.page, 'Fleet');
    await expect.poll(() => test.page.locator('.who').textContent()).toContain('Ada Operator');
    // The new password is the password now: the API signs Ada in with it.
    const login = await call('/api/v1/auth/login', {
      key: null,
      body: { email: 'ada@example.com', password: 'a-better-password' },
    });
    expect(login.api_key).toMatch(/^ew_/);
    expect(await sessionKey(test.page)).toMatch(/^ew_/);
    expectNoProblems(test);
  }, 60_000);
});

describe('the whole loop, in the console', () => {
  it('registers a node that reports, a verified webhook and an alert; the node falls silent, the receiver is told', async () => {
    const test = await page();
    const ui = test.page;
    await test.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    await signInWithKey(ui, server.baseUrl, adminKey);

    // A node, registered in the console: its token is shown once, with a working Copy button.
    await ui.getByRole('button', { name: 'Register a node' }).click();
    const registering = ui.getByRole('dialog', { name: 'Register a node' });
    await registering.getByLabel('Name').fill(NODE_NAME);
    await registering.getByRole('button', { name: 'Register', exact: true }).click();
    const token = (await registering.getByLabel('Node token').textContent()) ?? '';
    expect(token).toMatch(/^\S{20,}$/);
    await registering.getByRole('button', { name: 'Copy' }).click();
    await registering.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await ui.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await registering.getByRole('button', { name: 'Close' }).click();
    const row = ui.getByRole('row', { name: literally(NODE_NAME) });
    await row.getByText('NEW', { exact: true }).waitFor();

    const agent = reportLoop(token, NODE_NAME);
    try {
      await row.getByText('ALIVE', { exact: true }).waitFor();
      await row.getByText('2.4.1-sim').waitFor();

      // A webhook to the example receiver; the console shows the generated secret once, and the
      // receiver starts with it.
      const port = await freePort();
      await sections(ui).getByRole('link', { name: 'Webhooks' }).click();
      await settled(ui, 'Webhooks');
      await ui.getByRole('button', { name: 'Create a webhook' }).click();
      const creating = ui.getByRole('dialog', { name: 'Create a webhook' });
      await creating.getByLabel('Name').fill(WEBHOOK_NAME);
      await creating.getByLabel('URL').fill(`https://localhost:${port}/hook`);
      await creating.getByRole('button', { name: 'Create the webhook' }).click();
      const secret = (await creating.getByLabel('Signing secret').textContent()) ?? '';
      expect(secret.length).toBeGreaterThanOrEqual(16);
      await creating.getByRole('button', { name: 'Done' }).click();
      const receiver = await startExampleReceiver(port, secret);

      const hookRow = ui.getByRole('row', { name: literally(WEBHOOK_NAME) });
      await hookRow.getByText('unverified', { exact: true }).waitFor();
      await hookRow.getByRole('button', { name: 'Verify' }).click();
      const verdict = hookRow.getByRole('status');
      await verdict.getByText('SUCCESS', { exact: true }).waitFor();
      expect(await verdict.textContent()).toContain('the webhook is enabled');
      await hookRow.getByText('enabled', { exact: true }).waitFor();

      // An alert: this node's organization, UNREACHABLE only, to the webhook.
      await sections(ui).getByRole('link', { name: 'Alerts' }).click();
      await settled(ui, 'Alerts');
      await ui.getByRole('button', { name: 'Create an alert' }).click();
      const alerting = ui.getByRole('dialog', { name: 'Create an alert' });
      await alerting.getByLabel('Name').fill(ALERT_NAME);
      expect(await alerting.getByLabel('Type').inputValue()).toBe('NODE_STATE_CHANGE');
      await alerting.getByRole('checkbox', { name: 'ALIVE' }).uncheck();
      await alerting.getByRole('checkbox', { name: 'UNREACHABLE' }).check();
      await alerting.getByLabel('Send to').selectOption({ label: `Webhook: ${WEBHOOK_NAME}` });
      await alerting.getByRole('button', { name: 'Create the alert' }).click();
      await alerting.waitFor({ state: 'hidden' });
      const alertRow = ui.getByRole('row', { name: literally(ALERT_NAME) });
      await alertRow.getByText(`webhook ${WEBHOOK_NAME}`).waitFor();

      // Back to the fleet, where the node is still ALIVE; then it stops reporting.
      await sections(ui).getByRole('link', { name: 'Fleet' }).click();
      await row.getByText('ALIVE', { exact: true }).waitFor();
      await ui.evaluate(() => Object.assign(globalThis, { sameDocument: true }));
      await agent.stop();
      expect(agent.failures).toEqual([]);
      expect(agent.reports()).toBeGreaterThan(1);

      // The page reads the fleet again by itself: the change shows without a reload.
      await row
        .getByText('UNREACHABLE', { exact: true })
        .waitFor({ timeout: (HEARTBEAT_TIMEOUT_S + 15) * 1_000 });
      expect(await ui.evaluate(() => 'sameDocument' in globalThis)).toBe(true);

      // The notification, delivered; its detail shows the delivery and the receiver's answer.
      await sections(ui).getByRole('link', { name: 'Notifications' }).click();
      await settled(ui, 'Notifications');
      // The newest first; a node that looked silent once under load would have an older one too.
      const notification = ui.getByRole('row', { name: literally(UNREACHABLE_MESSAGE) }).first();
      await notification.getByText('delivered', { exact: true }).waitFor();
      await notification.getByRole('link', { name: UNREACHABLE_MESSAGE }).click();
      await settled(ui, UNREACHABLE_MESSAGE);
      const deliveries = ui.getByRole('region', { name: 'Deliveries' });
      await deliveries.getByText('delivered', { exact: true }).waitFor();
      await deliveries.getByText(/HTTP 200 in \d+ ms/).waitFor();

      // The example receiver checked the signature and printed what it got.
      await expect
        .poll(() => receiver.stdout, { timeout: WAIT_MS })
        .toMatch(literally(`NODE_STATE_CHANGE UNREACHABLE: ${UNREACHABLE_MESSAGE}`));
      expect(receiver.stderr).toBe('');
    } finally {
      await agent.stop();
    }
    expectNoProblems(test);
  }, 120_000);
});

const CHANNEL_NAME = 'Ops Slack';

/** examples/channel-stand-in.mjs as its own process: Slack's stand-in, printing what it is sent. */
async function startChannelStandIn(port: number) {
  const child = spawn(process.execPath, ['examples/channel-stand-in.mjs'], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      KIND: 'slack',
      PORT: String(port),
      TLS_CERT: join(tlsDir, 'cert.pem'),
      TLS_KEY: join(tlsDir, 'key.pem'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  receivers.push(child);
  const output = { stdout: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  await expect
    .poll(() => output.stdout, { timeout: WAIT_MS })
    .toContain(`slack stand-in listening on port ${port}`);
  return output;
}

describe('channels, in the console', () => {
  it('adds a Slack channel that a test reaches, offers it to alerts, and deletes another', async () => {
    const port = await freePort();
    const standIn = await startChannelStandIn(port);
    const test = await page({ signedInWith: adminKey });
    const ui = test.page;
    await ui.goto(`${server.baseUrl}/#/channels`);
    await settled(ui, 'Channels');
    await ui.getByRole('button', { name: 'Add a channel' }).click();
    const adding = ui.getByRole('dialog', { name: 'Add a channel' });
    await adding.getByLabel('Name').fill(CHANNEL_NAME);
    expect(await adding.getByLabel('Type').inputValue()).toBe('slack');
    await adding
      .getByLabel('Incoming webhook URL')
      .fill(`https://localhost:${port}/services/T1/B1/consoleSECRET`);
    await adding.getByRole('button', { name: 'Add the channel' }).click();
    await adding.waitFor({ state: 'hidden' });
    const row = ui.getByRole('row', { name: literally(CHANNEL_NAME) });
    await row.getByText('enabled', { exact: true }).waitFor();
    await row.getByText(`localhost:${port} …CRET`).waitFor();
    expect(await ui.locator('body').innerText()).not.toContain('consoleSECRET');

    await row.getByRole('button', { name: 'Test' }).click();
    const testing = ui.getByRole('dialog', { name: `Test ${CHANNEL_NAME}` });
    await testing.getByRole('button', { name: 'Send the sample' }).click();
    await testing.getByRole('status').getByText('HTTP 200').waitFor();
    await testing.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => standIn.stdout, { timeout: WAIT_MS }).toContain('"blocks"');

    await ui.goto(`${server.baseUrl}/#/alerts`);
    await settled(ui, 'Alerts');
    await ui.getByRole('button', { name: 'Create an alert' }).click();
    const alerting = ui.getByRole('dialog', { name: 'Create an alert' });
    await alerting.getByRole('option', { name: `Slack: ${CHANNEL_NAME}` }).waitFor({ state: 'attached' });
    await alerting.getByRole('button', { name: 'Close' }).click();

    await call('/api/v1/channel', {
      body: { name: 'Old pager', type: 'pagerduty', routing_key: 'OLDPAGERKEY0123456789abcd' },
    });
    await ui.goto(`${server.baseUrl}/#/channels`);
    await settled(ui, 'Channels');
    const old = ui.getByRole('row', { name: literally('Old pager') });
    await old.getByRole('button', { name: 'Delete' }).click();
    const deleting = ui.getByRole('dialog', { name: 'Delete Old pager' });
    await deleting.getByRole('button', { name: 'Delete the channel' }).click();
    await old.waitFor({ state: 'detached' });
    expectNoProblems(test);
  }, 60_000);
});

interface Fixtures {
  nodeId: string;
  notificationId: string;
  webhookId: string;
  deliveryId: string;
  channelId: string;
}

/** What the loop left, read from the API: the pages below show it. */
async function fixtures(): Promise<Fixtures> {
  const nodes = await call(`/api/v2/node?search=${NODE_NAME}`);
  const notifications = await call('/api/v2/notification?status=delivered&size=1');
  const webhooks = await call('/api/v2/webhook');
  const webhookId = webhooks.find((webhook: { name: string }) => webhook.name === WEBHOOK_NAME)?.id;
  const deliveries =
    webhookId === undefined ? undefined : await call(`/api/v1/webhook/${webhookId}/deliveries`);
  const channels = await call('/api/v2/channel');
  const found = {
    nodeId: nodes.results[0]?.id,
    notificationId: notifications.results[0]?.id,
    webhookId,
    deliveryId: deliveries?.results[0]?.id,
    channelId: channels.results.find((channel: { name: string }) => channel.name === CHANNEL_NAME)?.id,
  };
  expect(found, 'the tests above make the node, notification, webhook, delivery and channel').toEqual({
    nodeId: expect.any(String),
    notificationId: expect.any(String),
    webhookId: expect.any(String),
    deliveryId: expect.any(String),
    channelId: expect.any(String),
  });
  return found;
}

interface ConsolePage {
  /** Also the screenshot's name. */
  name: string;
  hash: string;
  heading: string | RegExp;
  /** After the page has settled: what it needs to show beyond its data (a dialog, a detail). */
  then?: (page: Page) => Promise<void>;
}

function consolePages(ids: Fixtures): ConsolePage[] {
  return [
    { name: 'fleet', hash: '/fleet', heading: 'Fleet' },
    {
      name: 'node',
      hash: `/nodes/${ids.nodeId}`,
      heading: NODE_NAME,
      // The loop left the node UNREACHABLE: its tunnels' and services' states are only the last known.
      then: async (target) => {
        await target
          .getByRole('note')
          .getByText(/the states below are the last known ones/)
          .waitFor();
        await target
          .getByRole('table', { name: 'Tunnels' })
          .getByText(/last known CONNECTED/)
          .first()
          .waitFor();
      },
    },
    { name: 'events', hash: '/events', heading: 'Events' },
    { name: 'notifications', hash: '/notifications', heading: 'Notifications' },
    { name: 'notification', hash: `/notifications/${ids.notificationId}`, heading: UNREACHABLE_MESSAGE },
    { name: 'alerts', hash: '/alerts', heading: 'Alerts' },
    {
      name: 'alerts-create',
      hash: '/alerts',
      heading: 'Alerts',
      then: async (target) => {
        await target.getByRole('button', { name: 'Create an alert' }).click();
        const dialog = target.getByRole('dialog', { name: 'Create an alert' });
        await dialog.getByRole('option', { name: `Webhook: ${WEBHOOK_NAME}` }).waitFor({ state: 'attached' });
        await dialog.getByRole('option', { name: 'Root organization' }).waitFor({ state: 'attached' });
      },
    },
    { name: 'webhooks', hash: '/webhooks', heading: 'Webhooks' },
    {
      name: 'webhook-deliveries',
      hash: `/webhooks/${ids.webhookId}?delivery=${ids.deliveryId}`,
      heading: WEBHOOK_NAME,
      then: async (target) => {
        await target
          .locator('.delivery-detail')
          .getByText(/HTTP 200 in \d+ ms/)
          .waitFor();
      },
    },
    { name: 'channels', hash: '/channels', heading: 'Channels' },
    { name: 'channel', hash: `/channels/${ids.channelId}`, heading: CHANNEL_NAME },
    { name: 'maintenance', hash: '/silences', heading: 'Maintenance windows' },
    { name: 'keys', hash: '/keys', heading: 'API keys' },
    { name: 'users', hash: '/users', heading: 'Users' },
  ];
}

describe('every page', () => {
  it('has no serious or critical accessibility violations, and is photographed at 1280 and 390 px', async () => {
    const ids = await fixtures();
    // A little more to look at: two nodes that have not reported yet, and a window planned for tomorrow.
    for (const name of ['edge-lisbon-02', 'edge-oslo-03']) await call('/api/v1/node', { body: { name } });
    const me = await call('/api/v1/user/me');
    const tomorrow = Date.now() + 86_400_000;
    await call('/api/v1/silence', {
      body: {
        name: 'Firmware rollout',
        org_id: me.org_id,
        starts_at: new Date(tomorrow).toISOString(),
        ends_at: new Date(tomorrow + 2 * 3_600_000).toISOString(),
        comment: 'Nodes restart one by one.',
      },
    });

    const test = await page({ signedInWith: adminKey });
    for (const target of consolePages(ids)) {
      await test.page.goto(`${server.baseUrl}/#${target.hash}`);
      await settled(test.page, target.heading);
      await target.then?.(test.page);
      await checkAndPhotograph(test.page, target.name);
    }

    const signIn = await page();
    await signIn.page.goto(`${server.baseUrl}/`);
    await settled(signIn.page, 'Sign in');
    await checkAndPhotograph(signIn.page, 'sign-in');
    await signIn.page.getByRole('button', { name: 'API key', exact: true }).click();
    await signIn.page.getByLabel('API key', { exact: true }).waitFor();
    await axeCheck(signIn.page, 'sign-in with a key');
    expectNoProblems(test, signIn);
  }, 120_000);
});

describe("everyone's notifications, and names that link", () => {
  it("shows an Operator the switch to everyone's notifications, which names the node and organization as links", async () => {
    const ids = await fixtures();
    const me = await call('/api/v1/user/me');
    const email = 'otto@example.com';
    await createVerifiedUser('Otto Operator', email, 'operator', 'first-password');
    const login = await call('/api/v1/auth/login', {
      key: null,
      body: { email, password: 'first-password', new_password: 'otto-new-password' },
    });
    const test = await page({ signedInWith: login.api_key });
    const ui = test.page;
    await ui.goto(`${server.baseUrl}/#/notifications`);
    await settled(ui, 'Notifications');
    await ui.getByText('No notifications yet').waitFor();

    // The administrator's notification shows once the switch is on, and the switch is kept in the URL.
    const everyone = ui.getByRole('switch', { name: "Everyone's" });
    await everyone.check();
    expect(ui.url()).toContain('scope=org');
    const row = ui.getByRole('row', { name: literally(UNREACHABLE_MESSAGE) }).first();
    await row.waitFor();
    expect(await row.getByRole('cell', { name: me.name, exact: true }).count()).toBe(1);
    expect(await row.getByRole('link', { name: NODE_NAME, exact: true }).getAttribute('href')).toBe(
      `#/nodes/${ids.nodeId}`,
    );
    expect(await row.getByRole('link', { name: me.organization.name }).getAttribute('href')).toBe(
      `#/fleet?org=${me.org_id}`,
    );
    await ui.reload();
    await settled(ui, 'Notifications');
    expect(await ui.getByRole('switch', { name: "Everyone's" }).isChecked()).toBe(true);

    // Its page opens for the Operator too, without a link into a delivery log that is not theirs.
    await row.getByRole('link', { name: UNREACHABLE_MESSAGE }).click();
    await settled(ui, UNREACHABLE_MESSAGE);
    await ui.getByRole('link', { name: me.organization.name }).waitFor();
    await ui
      .getByRole('region', { name: 'Deliveries' })
      .getByText('delivered', { exact: true })
      .first()
      .waitFor();
    expect(await ui.getByRole('link', { name: /delivery log/ }).count()).toBe(0);
    await ui.getByRole('link', { name: NODE_NAME, exact: true }).click();
    // The whole heading: the notification's own heading names the node too, until the node page replaces it.
    await settled(ui, new RegExp(`^${NODE_NAME}$`));
    expectNoProblems(test);
  }, 60_000);

  it("names each delivery's node and organization in the delivery log, as links", async () => {
    const ids = await fixtures();
    const me = await call('/api/v1/user/me');
    const test = await page({ signedInWith: adminKey });
    const ui = test.page;
    await ui.goto(`${server.baseUrl}/#/webhooks/${ids.webhookId}`);
    await settled(ui, WEBHOOK_NAME);
    const log = ui.getByRole('region', { name: 'Delivery log' });
    await log.getByRole('link', { name: NODE_NAME, exact: true }).first().click();
    await settled(ui, NODE_NAME);
    await ui.goBack();
    await settled(ui, WEBHOOK_NAME);
    await log.getByRole('link', { name: me.organization.name }).first().click();
    await settled(ui, 'Fleet');
    expect(ui.url()).toContain(`org=${me.org_id}`);
    expectNoProblems(test);
  }, 60_000);
});

describe('the phone', () => {
  it('folds the sections into a menu at 390 px, which a move to another page closes', async () => {
    const test = await page({ signedInWith: adminKey });
    const ui = test.page;
    await ui.setViewportSize(NARROW);
    await ui.goto(`${server.baseUrl}/#/fleet`);
    await settled(ui, 'Fleet');
    const menu = ui.getByRole('button', { name: 'Menu' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await sections(ui).getByRole('link', { name: 'Alerts' }).isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await axeCheck(ui, 'the open menu at 390 px');
    await screenshot(ui, 'menu');
    await sections(ui).getByRole('link', { name: 'Alerts' }).click();
    await settled(ui, 'Alerts');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await sections(ui).getByRole('link', { name: 'Fleet' }).isVisible()).toBe(false);
    expectNoProblems(test);
  });
});

describe('bulk actions on the Fleet page', () => {
  it('opens a maintenance window for the ticked nodes, and deletes others, saying what each did', async () => {
    const [keep, quiet1, quiet2] = await Promise.all(
      ['bulk-keep', 'bulk-quiet-1', 'bulk-quiet-2', 'bulk-gone'].map(
        (name) => call('/api/v1/node', { body: { name } }) as Promise<{ id: string }>,
      ),
    );
    const test = await page({ signedInWith: adminKey });
    const ui = test.page;
    await ui.goto(`${server.baseUrl}/#/fleet?search=bulk-`);
    await settled(ui, 'Fleet');
    const bar = ui.getByRole('region', { name: 'Selected nodes' });
    await ui.getByRole('checkbox', { name: 'Select bulk-quiet-1' }).check();
    await ui.getByRole('checkbox', { name: 'Select bulk-quiet-2' }).check();
    expect(await bar.getByRole('status').textContent()).toBe('2 nodes selected.');
    await bar.getByRole('button', { name: 'Maintenance window…' }).click();
    const dialog = ui.getByRole('dialog', { name: 'Maintenance window for 2 nodes' });
    await dialog.getByLabel('Name').fill('Swap the uplinks');
    await dialog.getByRole('button', { name: 'Open the window now' }).click();
    await expect
      .poll(() => bar.getByRole('status').textContent(), { timeout: WAIT_MS })
      .toBe('2 maintenance window(s) opened.');
    const windows = (await call('/api/v2/silence?state=active&size=100')).results.filter(
      (window: { name: string }) => window.name === 'Swap the uplinks',
    );
    expect(windows.map((window: { node_id: string }) => window.node_id).sort()).toEqual(
      [quiet1!.id, quiet2!.id].sort(),
    );
    expect(await ui.getByRole('checkbox', { name: 'Select bulk-quiet-1' }).isChecked()).toBe(false);

    await ui.getByRole('checkbox', { name: 'Select bulk-gone' }).check();
    await bar.getByRole('button', { name: 'Delete…' }).click();
    const confirm = ui.getByRole('dialog', { name: 'Delete 1 node' });
    await axeCheck(ui, 'the bulk delete dialog');
    await confirm.getByRole('button', { name: 'Delete them' }).click();
    await expect
      .poll(() => bar.getByRole('status').textContent(), { timeout: WAIT_MS })
      .toBe('1 node(s) deleted.');
    await expect
      .poll(() => ui.getByRole('link', { name: 'bulk-gone' }).count(), { timeout: WAIT_MS })
      .toBe(0);
    // The node left unticked is still there.
    await call(`/api/v1/node/${keep!.id}`);
    expectNoProblems(test);
  }, 60_000);
});

describe('the maintenance window form', () => {
  it('plans a weekly window in a named time zone, with the API’s refusal at the field, and lists its schedule', async () => {
    const test = await page({ signedInWith: adminKey });
    const ui = test.page;
    await ui.goto(`${server.baseUrl}/#/silences`);
    await settled(ui, 'Maintenance windows');
    await ui.getByRole('button', { name: 'Plan a window' }).click();
    const form = ui.getByRole('dialog', { name: 'Plan a maintenance window' });
    await form.getByRole('option', { name: 'Root organization' }).waitFor({ state: 'attached' });
    await form.getByLabel('Name').fill('Nightly backups');
    await form.getByLabel('Repeats').selectOption('weekly');
    // The time zone starts as the browser's own.
    const browserZone = await ui.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(await form.getByLabel('Time zone').inputValue()).toBe(browserZone);
    await form.getByRole('checkbox', { name: 'Monday' }).check();
    await form.getByRole('checkbox', { name: 'Thursday' }).check();
    await form.getByLabel('Opens at').fill('02:30');
    await form.getByLabel('For (minutes)').fill('90');
    await form.getByLabel('Time zone').fill('Mars/Olympus_Mons');
    await form.getByRole('button', { name: 'Create the window' }).click();
    await form.getByText(/^recurrence\.timezone is not a time zone known here/).waitFor({ timeout: WAIT_MS });
    expect(await form.getByLabel('Time zone').getAttribute('aria-invalid')).toBe('true');
    await axeCheck(ui, 'the maintenance window form with a refused time zone');

    await form.getByLabel('Time zone').fill('Europe/Paris');
    await form.getByRole('button', { name: 'Create the window' }).click();
    await form.waitFor({ state: 'hidden', timeout: WAIT_MS });
    const [planned] = (await call('/api/v2/silence?size=100')).results.filter(
      (window: { name: string }) => window.name === 'Nightly backups',
    );
    expect(planned).toMatchObject({
      recurrence: {
        frequency: 'weekly',
        days: ['MO', 'TH'],
        start: '02:30',
        duration_minutes: 90,
        timezone: 'Europe/Paris',
      },
      until: null,
      ends_at: null,
    });
    const row = ui.getByRole('row').filter({ hasText: 'Nightly backups' });
    await row
      .getByText('Weekly on Mon, Thu at 02:30 for 1 h 30 min (Europe/Paris)')
      .waitFor({ timeout: WAIT_MS });
    expect(await row.locator(`time[datetime="${planned.next_occurrence.ends_at}"]`).count()).toBe(1);
    await checkAndPhotograph(ui, 'maintenance-recurring');
    expectNoProblems(test);
  }, 60_000);
});

describe('the alert form', () => {
  it("offers only what the chosen type takes, and shows the API's validation message at the field", async () => {
    const test = await page({ signedInWith: adminKey });
    const ui = test.page;
    await ui.goto(`${server.baseUrl}/#/alerts`);
    await settled(ui, 'Alerts');
    await ui.getByRole('button', { name: 'Create an alert' }).click();
    const form = ui.getByRole('dialog', { name: 'Create an alert' });

    // Node state change: its two conditions, a duration, no tunnel scope, no suppression switch.
    const conditions = form.getByRole('group', { name: 'Notify when' }).getByRole('checkbox');
    const values = () => conditions.evaluateAll((boxes) => boxes.map((box) => box.getAttribute('value')));
    await expect.poll(values).toEqual(['ALIVE', 'UNREACHABLE']);
    expect(await form.getByLabel('For at least (minutes)').count()).toBe(1);
    expect(await form.getByLabel(/Only this tunnel/).count()).toBe(0);
    // Certificate expiry: its percentages, and no duration.
    await form.getByLabel('Type').selectOption('CERT_EXPIRY');
    await expect.poll(values).toEqual(['80', '100']);
    expect(await form.getByLabel('For at least (minutes)').count()).toBe(0);
    // Tunnel state change: a tunnel scope and the suppression switch.
    await form.getByLabel('Type').selectOption('TUNNEL_STATE_CHANGE');
    await form.getByLabel(/Only this tunnel/).waitFor();
    await form.getByLabel(/Stay quiet while the node itself is unreachable/).waitFor();

    // A duration beyond the API's limit: its own message, at the duration field, and nothing created.
    await form.getByLabel('Name').fill('Too patient');
    await form.getByLabel('For at least (minutes)').fill('99999');
    await form.getByRole('button', { name: 'Create the alert' }).click();
    const duration = form.getByLabel('For at least (minutes)');
    await expect.poll(() => duration.getAttribute('aria-invalid'), { timeout: WAIT_MS }).toBe('true');
    const described = (await duration.getAttribute('aria-describedby')) ?? '';
    const message = await ui.locator(`[id="${described.split(' ').at(-1) ?? ''}"]`).textContent();
    expect(message).toMatch(/^duration /);
    expect(
      (await call('/api/v2/mysubscriptions?size=100')).results.map((alert: { name: string }) => alert.name),
    ).not.toContain('Too patient');
    expectNoProblems(test);
  }, 60_000);
});

describe('error states', () => {
  const DOWN = 'The database does not answer.';

  it("shows on every page the API's own words when it fails, and says so when it cannot be reached", async () => {
    const ids = await fixtures();
    const failing = await page({ signedInWith: adminKey });
    // The service's own error shape and words (those of /readyz when its database is away).
    await failing.context.route('**/api/**', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ statusCode: 503, errorCode: 'SERVICE_UNAVAILABLE', message: DOWN }),
      }),
    );
    const unreachable = await page({ signedInWith: adminKey });
    await unreachable.context.route('**/api/**', (route) => route.abort('connectionrefused'));

    // One tab per page, all at once: the console retries a 5xx twice, a second apart, before it says so.
    const targets = consolePages(ids).filter((target) => target.then === undefined);
    const tabs = await Promise.all(
      targets.map((_target, i) => (i === 0 ? Promise.resolve(failing) : anotherPage(failing.context))),
    );
    const shows = async (tab: Page, hash: string, words: string) => {
      await tab.goto(`${server.baseUrl}/#${hash}`);
      // A page with charts says it of them too: the first such note is enough.
      const note = tab.getByRole('alert').filter({ hasText: words }).first();
      await note.waitFor({ timeout: 2 * WAIT_MS }).catch(async (error: unknown) => {
        throw new Error(`#${hash}: ${await tab.locator('body').innerText()}`, { cause: error });
      });
      expect(await note.textContent(), hash).toMatch(/^Could not load this/);
    };
    await Promise.all([
      ...targets.map((target, i) => shows(tabs[i]!.page, target.hash, DOWN)),
      shows(
        unreachable.page,
        '/fleet',
        'The service cannot be reached. Check that it is running, then try again.',
      ),
    ]);
    expectNoProblems(...tabs, unreachable);
  }, 90_000);

  it('shows a Read Only user no create buttons; the Users page says only an Admin adds users, and shows the 403', async () => {
    const ids = await fixtures();
    const email = 'rita@example.com';
    await createVerifiedUser('Rita Reader', email, 'read_only', 'first-password');
    const login = await call('/api/v1/auth/login', {
      key: null,
      body: { email, password: 'first-password', new_password: 'rita-new-password' },
    });
    const test = await page({ signedInWith: login.api_key });
    const ui = test.page;
    const views: [hash: string, heading: string, writes: string[]][] = [
      ['/fleet', 'Fleet', ['Register a node']],
      [`/nodes/${ids.nodeId}`, NODE_NAME, ['Edit', 'New token', 'Delete']],
      ['/alerts', 'Alerts', ['Create an alert']],
      ['/webhooks', 'Webhooks', ['Create a webhook']],
      ['/channels', 'Channels', ['Add a channel', 'Test', 'Delete']],
      ['/silences', 'Maintenance windows', ['Plan a window', 'End now', 'Cancel']],
    ];
    await ui.goto(`${server.baseUrl}/#/notifications`);
    await settled(ui, 'Notifications');
    await ui.locator('.who').getByText('Rita Reader').waitFor();
    expect(await ui.getByRole('switch', { name: "Everyone's" }).count()).toBe(0);
    for (const [hash, heading, writes] of views) {
      await ui.goto(`${server.baseUrl}/#${hash}`);
      await settled(ui, heading);
      // The buttons depend on the roles: only once the console knows who this is does their absence count.
      await ui.locator('.who').getByText('Rita Reader').waitFor();
      for (const name of writes)
        expect(await ui.getByRole('button', { name }).count(), `${name} on ${hash}`).toBe(0);
    }
    expect(await sections(ui).getByRole('link', { name: 'Users' }).count()).toBe(0);

    await ui.goto(`${server.baseUrl}/#/users`);
    await settled(ui, 'Users');
    const refusal = ui.getByRole('alert');
    await refusal.getByText('Only an Admin adds users.').waitFor();
    expect(await refusal.textContent()).toMatch(/^Not allowed/);
    // Should the reader try anyway, the API's own refusal (403) is shown in its words, and nobody is added.
    await ui.getByLabel('Name').fill('Not Added');
    await ui.getByLabel('E-mail').fill('not-added@example.com');
    await ui.getByLabel('First password').fill('first-password');
    await ui.getByRole('button', { name: 'Add the user' }).click();
    await ui
      .getByRole('alert')
      .filter({ hasText: 'Your roles do not allow this operation' })
      .waitFor({ timeout: WAIT_MS });
    expectNoProblems(test);
  }, 60_000);

  it('returns to sign-in when the key it uses is revoked meanwhile (401)', async () => {
    const created = await call('/api/v1/apikey', { body: { name: 'revoked while signed in' } });
    const test = await page();
    await signInWithKey(test.page, server.baseUrl, created.key);
    await call(`/api/v1/apikey/${created.id}`, { method: 'DELETE' });
    // The fleet is read again every 2 s: the next read gets the 401.
    await test.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await sessionKey(test.page)).toBeNull();
    expectNoProblems(test);
  }, 60_000);
});
