import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAndPhotograph, openPage, settled, WAIT_MS, type TestPage } from './support/browser.js';
import { startConsoleService, type ConsoleService } from './support/console-service.js';
import { bounded, type Server, STOP_TIMEOUT_MS } from './support/service-process.js';
import { testCertificates } from './support/tls.js';
import { startCorrectReceiver, type ReceiverWithSecret } from './support/webhooks.js';

// Incidents in the console, made for real: `edgewatch serve` in its own process with a short heartbeat
// timeout, nodes whose reports the test sends, and a grouped alert to a verified webhook (a local HTTPS
// receiver). Two of Acme Lyon's three nodes fall silent and stay so: the liveness sweep makes them
// UNREACHABLE, which opens an incident and fires it. Then Acme Paris's node falls silent and comes back: a
// newer incident, resolved. The Incidents page must list the open one first, with its counts; the incident
// page its members and the messages it sent; the Fleet page how many are open, linking to them.

const ALERT_NAME = 'Nodes down';
const LYON = 'Acme Lyon';
const PARIS = 'Acme Paris';

let service: ConsoleService;
let server: Server;
let browser: Browser;
let adminKey: string;
let hook: ReceiverWithSecret;
let tlsDir: string;
let reports: ReturnType<typeof reportLoop> | undefined;

const call = (path: string, body?: unknown) => service.call(path, body);

interface Incident {
  id: string;
  status: 'firing' | 'resolved';
  organization: { id: string; name: string };
  sequence: number;
  counts: { firing: number; flaps: number; behind_unreachable: number; members: number };
}

interface IncidentDetail extends Incident {
  messages: {
    sequence: number;
    reason: string;
    status: string;
    deliveries: { status: string }[];
  }[];
}

const incidents = async (query = '') =>
  (await call(`/api/v2/incident${query}`)) as { total_count: number; results: Incident[] };

const incidentOf = async (orgName: string) =>
  (await incidents()).results.find((incident) => incident.organization.name === orgName);

/** Every node whose token is in `reporting` reports, well inside the heartbeat timeout, until stopped. */
function reportLoop(reporting: Set<string>) {
  const failures: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const token of [...reporting]) {
        try {
          const res = await fetch(`${server.baseUrl}/api/v1/agent/report`, {
            method: 'POST',
            headers: { 'x-node-token': token },
            signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
          });
          if (res.status !== 200) failures.push(`${res.status} ${await res.text()}`);
        } catch (error) {
          failures.push(String(error));
        }
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

/** A table's rows, each as its cells' text by column header. */
async function rowsOf(table: Locator): Promise<Record<string, string>[]> {
  const headers = (await table.locator('thead th').allTextContents()).map((text) => text.trim());
  const rows: Record<string, string>[] = [];
  for (const row of await table.locator('tbody tr').all()) {
    const cells = await row.locator('td').allTextContents();
    rows.push(Object.fromEntries(headers.map((header, i) => [header, (cells[i] ?? '').trim()])));
  }
  return rows;
}

const opened: TestPage[] = [];

async function signedIn(): Promise<TestPage> {
  const test = await openPage(browser, { signedInWith: adminKey });
  opened.push(test);
  return test;
}

async function visit(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${server.baseUrl}/#${hash}`);
  await settled(page, heading);
}

beforeAll(async () => {
  hook = await startCorrectReceiver();
  tlsDir = mkdtempSync(join(tmpdir(), 'edgewatch-incidents-tls-'));
  writeFileSync(join(tlsDir, 'ca.pem'), testCertificates().ca);
  service = await startConsoleService('incidents', {
    // Short, so that a silent node is UNREACHABLE within seconds.
    NODE_REPORT_INTERVAL_S: '1',
    NODE_HEARTBEAT_TIMEOUT_S: '3',
    JOB_POLL_INTERVAL_MS: '250',
    // The receiver: on this machine, with the test CA's certificate.
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
    NODE_EXTRA_CA_CERTS: join(tlsDir, 'ca.pem'),
  });
  ({ server, browser, adminKey } = service);
}, 120_000);

afterAll(async () => {
  await Promise.all(opened.splice(0).map((test) => test.context.close()));
  await reports?.stop();
  await service?.close();
  await hook?.receiver.close();
  if (tlsDir !== undefined) rmSync(tlsDir, { recursive: true, force: true });
});

/** The outage, through the API and the agents' reports; resolves once both incidents are as described. */
async function makeIncidents() {
  const me = await call('/api/v1/user/me');
  const org = async (name: string) =>
    (await call('/api/v1/org', { name, parent_id: me.org_id })).id as string;
  const lyon = await org(LYON);
  const paris = await org(PARIS);

  const webhook = await call('/api/v1/webhook', {
    name: 'Pager bridge',
    url: `${hook.receiver.url}/hook`,
    secret: hook.secret.value,
  });
  expect((await call(`/api/v1/webhook/${webhook.id}/verify`, {})).status).toBe('SUCCESS');
  const alert = await call('/api/v1/mysubscriptions', {
    name: ALERT_NAME,
    type: 'NODE_STATE_CHANGE',
    channel_type: 'webhook',
    channel_id: webhook.id,
    settings: {
      org_id: me.org_id,
      include_child: true,
      alert_me: 'UNREACHABLE',
      // A webhook alert sends each notification on its own unless asked to group.
      group_by: 'organization',
      group_wait: 1,
      group_interval: 1,
    },
  });
  expect(alert.settings.group_by).toBe('organization');

  const node = async (name: string, orgId: string) => {
    const created = await call('/api/v1/node', { name, create_under: orgId });
    return { id: created.id as string, token: created.token as string };
  };
  const lyonNodes = [
    await node('lyon-000', lyon),
    await node('lyon-001', lyon),
    await node('lyon-002', lyon),
  ];
  const parisNode = await node('paris-000', paris);
  const reporting = new Set([...lyonNodes, parisNode].map((each) => each.token));
  // The healthy nodes go on reporting until the end of the file: a silence would change the incidents.
  reports = reportLoop(reporting);
  const alive = async () => (await call('/api/v2/node?node_state=ALIVE&size=1')).total_count as number;
  await expect.poll(alive, { timeout: WAIT_MS }).toBe(4);

  // Acme Lyon: two of three fall silent, and stay so.
  reporting.delete(lyonNodes[0]!.token);
  reporting.delete(lyonNodes[1]!.token);
  await expect.poll(async () => (await incidentOf(LYON))?.counts.firing, { timeout: 2 * WAIT_MS }).toBe(2);

  // Acme Paris, later: its node falls silent, then reports again.
  reporting.delete(parisNode.token);
  await expect.poll(async () => (await incidentOf(PARIS))?.status, { timeout: 2 * WAIT_MS }).toBe('firing');
  reporting.add(parisNode.token);
  await expect.poll(async () => (await incidentOf(PARIS))?.status, { timeout: 2 * WAIT_MS }).toBe('resolved');
  expect(reports.failures).toEqual([]);

  // Every message of Acme Lyon's incident reached the receiver, with no change left to tell.
  const lyonIncident = (await incidentOf(LYON))!;
  await expect
    .poll(
      async () => {
        const detail = (await call(`/api/v1/incident/${lyonIncident.id}`)) as IncidentDetail;
        const members = await call(`/api/v2/incident/${lyonIncident.id}/members`);
        return {
          delivered: detail.messages.every(
            (message) =>
              message.status === 'delivered' &&
              message.deliveries.length === 1 &&
              message.deliveries.every((delivery) => delivery.status === 'delivered'),
          ),
          changes: (members.results as { change: string | null }[]).map((member) => member.change),
        };
      },
      { timeout: 2 * WAIT_MS },
    )
    .toEqual({ delivered: true, changes: [null, null] });
  const lyonDetail = (await call(`/api/v1/incident/${lyonIncident.id}`)) as IncidentDetail;
  const parisIncident = (await incidentOf(PARIS))!;
  return { lyonNodes, lyon: lyonDetail, paris: parisIncident };
}

let made: Awaited<ReturnType<typeof makeIncidents>> | undefined;
/** Made once, by whichever test needs them first. */
async function fixtures() {
  made ??= await makeIncidents();
  return made;
}

describe('the Incidents page', () => {
  it('lists the open incident first, with its counts, and filters by status', async () => {
    const { lyon, paris } = await fixtures();
    expect(lyon.status).toBe('firing');
    expect(lyon.counts).toEqual({ firing: 2, members: 2, flaps: 0, behind_unreachable: 0 });
    expect(lyon.messages[0]?.reason).toBe('opened');
    expect(paris.status).toBe('resolved');

    const { page, problems } = await signedIn();
    await page.goto(`${server.baseUrl}/#/fleet`);
    await settled(page, 'Fleet');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Incidents' }).click();
    await settled(page, 'Incidents');
    expect(page.url()).toMatch(/#\/incidents$/);

    const table = page.getByRole('table', { name: 'Incidents' });
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: WAIT_MS }).toBe(2);
    const rows = await rowsOf(table);
    // Firing first, though Acme Paris's incident opened later.
    expect(rows.map((row) => [row.Status, row.Incident])).toEqual([
      ['firing', LYON],
      ['resolved', PARIS],
    ]);
    expect(rows[0]).toMatchObject({
      Alert: ALERT_NAME,
      Type: 'Node state change',
      Firing: '2',
      Members: '2',
      Flaps: '0',
      'Behind unreachable': '0',
    });
    expect(rows[0]?.Opened).toMatch(/ago|now/);
    await checkAndPhotograph(page, 'incidents');

    // The status filter, from the keyboard: only the resolved one, and the URL says so.
    const status = page.getByRole('search').getByLabel('Status');
    await status.focus();
    await status.selectOption('resolved');
    await expect.poll(() => page.url()).toMatch(/#\/incidents\?status=resolved$/);
    await expect
      .poll(async () => (await rowsOf(table)).map((row) => row.Incident), { timeout: WAIT_MS })
      .toEqual([PARIS]);
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('an incident page', () => {
  it('shows its state, counts, members (linking to their nodes) and the messages it sent', async () => {
    const { lyon, lyonNodes, paris } = await fixtures();
    const { page, problems } = await signedIn();
    await visit(page, '/incidents', 'Incidents');
    await page.getByRole('table', { name: 'Incidents' }).getByRole('link', { name: LYON }).click();
    await settled(page, `${ALERT_NAME}: ${LYON}`);
    expect(page.url()).toContain(`#/incidents/${lyon.id}`);

    const facts = page.locator('dl.facts');
    expect(await facts.textContent()).toContain('StatusfiringAlert');
    const numbers = page.locator('dl.tallies');
    expect(await numbers.getAttribute('aria-label')).toBe('The incident in numbers');
    expect(await numbers.locator('div').allTextContents()).toEqual([
      'Firing2',
      'Members2',
      'Flaps0',
      'Behind unreachable0',
    ]);

    // The members: both silent nodes, UNREACHABLE, each linking to its node's page.
    const members = page.getByRole('table', { name: 'Members' });
    await expect.poll(() => members.locator('tbody tr').count(), { timeout: WAIT_MS }).toBe(2);
    const memberRows = await rowsOf(members);
    expect(memberRows.map((row) => row.Member).sort()).toEqual(['lyon-000', 'lyon-001']);
    for (const row of memberRows) {
      expect(row.State).toBe('ALIVE → UNREACHABLE');
      expect(row.Change).toBe('—');
      expect(row.Since).toMatch(/ago|now/);
    }
    expect(await page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('1–2 of 2');
    for (const node of lyonNodes.slice(0, 2)) {
      const name = node === lyonNodes[0] ? 'lyon-000' : 'lyon-001';
      expect(await members.getByRole('link', { name }).getAttribute('href')).toBe(`#/nodes/${node.id}`);
    }

    // The messages: as many as the API has, in order, each delivered to the webhook.
    const messages = page.getByRole('table', { name: 'Messages' });
    const messageRows = await rowsOf(messages);
    expect(messageRows.map((row) => [row.Message?.split(':')[0], row.Status])).toEqual(
      lyon.messages.map((message) => [`#${message.sequence} ${message.reason}`, 'delivered']),
    );
    for (const row of messageRows) {
      expect(row.Channel).toBe('webhook');
      expect(row.Deliveries).toMatch(/^delivered 1 attempt, delivered .*In the webhook's delivery log/);
    }
    await checkAndPhotograph(page, 'incident');

    // A member's node, one click away.
    await members.getByRole('link', { name: 'lyon-000' }).click();
    await settled(page, 'lyon-000');
    expect(page.url()).toContain(`#/nodes/${lyonNodes[0]!.id}`);

    // The resolved one: every member recovered and told; its messages end with the resolve.
    await visit(page, `/incidents/${paris.id}`, `${ALERT_NAME}: ${PARIS}`);
    expect(await page.locator('dl.facts').textContent()).toContain('Statusresolved');
    const parisMessages = await rowsOf(page.getByRole('table', { name: 'Messages' }));
    expect(parisMessages.at(0)?.Message).toMatch(/^#1 opened: /);
    expect(parisMessages.at(-1)?.Message).toMatch(/^#\d+ resolved: every member recovered$/);
    await checkAndPhotograph(page, 'incident-resolved');
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('the Fleet page', () => {
  it('shows how many incidents are open, and links to them', async () => {
    await fixtures();
    expect((await incidents('?status=firing&size=1')).total_count).toBe(1);
    const { page, problems } = await signedIn();
    await visit(page, '/fleet', 'Fleet');
    const link = page.getByRole('link', { name: '1 incident open' });
    await link.waitFor();
    await checkAndPhotograph(page, 'fleet-incidents');
    await link.click();
    await settled(page, 'Incidents');
    expect(page.url()).toMatch(/#\/incidents\?status=firing$/);
    expect(await page.getByRole('search').getByLabel('Status').inputValue()).toBe('firing');
    const rows = await rowsOf(page.getByRole('table', { name: 'Incidents' }));
    expect(rows.map((row) => [row.Status, row.Incident, row.Firing])).toEqual([['firing', LYON, '2']]);
    expect(problems).toEqual([]);
    expect(reports?.failures).toEqual([]);
  }, 120_000);
});
