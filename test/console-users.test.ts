import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  axeCheck,
  checkAndPhotograph,
  openPage,
  settled,
  WAIT_MS,
  type TestPage,
} from './support/browser.js';
import { startConsoleService, type ConsoleService } from './support/console-service.js';
import { type Server, STOP_TIMEOUT_MS } from './support/service-process.js';

// The Users page as an Admin meets it, in a real browser against `edgewatch serve`: the list of the users they
// manage with its search and role filter, a user's roles changed in a dialog (and the last Admin's kept, in the
// API's words), and removals whose confirmation says what goes with the user (force=true only then).

const LAST_ADMIN =
  'This is the last Admin of the root organization: give another user there the Admin role first.';

let service: ConsoleService;
let server: Server;
let browser: Browser;
let adminKey: string;
const opened: TestPage[] = [];

beforeAll(async () => {
  service = await startConsoleService('users', {});
  ({ server, browser, adminKey } = service);
}, 120_000);

afterEach(async () => {
  await Promise.all(opened.splice(0).map((test) => test.context.close()));
});

afterAll(async () => {
  await service?.close();
});

/** Any request; the status is the caller's to check. */
async function request(method: string, path: string, init: { body?: unknown; key?: string | null } = {}) {
  const key = init.key === undefined ? adminKey : init.key;
  const res = await fetch(server.baseUrl + path, {
    method,
    headers: {
      ...(key === null ? {} : { 'x-api-key': key }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
  });
  const text = await res.text();
  return { status: res.status, text, body: text === '' ? undefined : JSON.parse(text) };
}

/** A request that must succeed (2xx): its body. */
async function call(method: string, path: string, init: { body?: unknown; key?: string | null } = {}) {
  const res = await request(method, path, init);
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body;
}

/** The e-mail address verified through the link the service logged (without SMTP_URL it logs each e-mail). */
async function verify(email: string) {
  const line = await server.waitFor(
    `the verification e-mail to ${email}`,
    (entry) => JSON.stringify(entry).includes(email) && (entry.msg ?? '').includes('verify-email?token='),
    WAIT_MS,
  );
  const token = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(line.msg ?? '')?.[1];
  expect(token).toBeDefined();
  expect((await call('GET', `/api/v1/user/verify-email?token=${token}`, { key: null })).status).toBe(
    'SUCCESS',
  );
}

/** The first sign-in (with its password change): the user's own API key. */
async function signIn(email: string, password: string): Promise<string> {
  const login = await call('POST', '/api/v1/auth/login', {
    key: null,
    body: { email, password, new_password: `${password}-changed` },
  });
  return login.api_key as string;
}

/** An alert of the key's owner: what removing them must name. */
async function giveAlert(key: string, orgId: string, name: string) {
  await call('POST', '/api/v1/mysubscriptions', {
    key,
    body: { name, type: 'NODE_STATE_CHANGE', settings: { org_id: orgId, alert_me: 'UNREACHABLE' } },
  });
}

async function page(options: Parameters<typeof openPage>[1] = {}): Promise<TestPage> {
  const test = await openPage(browser, options);
  opened.push(test);
  return test;
}

const table = (ui: Page) => ui.getByRole('table', { name: 'Users' });
const rows = (ui: Page) => table(ui).locator('tbody tr');
const rowOf = (ui: Page, name: string) =>
  rows(ui).filter({ has: ui.getByRole('cell', { name, exact: true }) });
/** Each row's name cell, in order. */
const names = (ui: Page) => rows(ui).locator('td:first-child').allInnerTexts();
const cellOf = (row: Locator, column: number) => row.locator(`td:nth-child(${column})`);
const ROLES_COLUMN = 4;

/** Axe and screenshots of the whole page from its top (a page left scrolled draws its sticky bar mid-way). */
async function photograph(ui: Page, name: string) {
  await ui.evaluate('window.scrollTo(0, 0)');
  await checkAndPhotograph(ui, name);
}

describe('the Users page of an Admin', () => {
  it('lists, searches, filters, edits roles (keeping the last Admin) and removes users with what they own', async () => {
    const me = await call('GET', '/api/v1/user/me');
    const orgId = me.org_id as string;
    // Ursula: added through the API as Read Only, verified; she signs in once her roles allow her alerts.
    const ursula = await call('POST', '/api/v1/user', {
      body: {
        name: 'Ursula User',
        email: 'ursula@example.com',
        password: 'ursula-first',
        roles: ['read_only'],
      },
    });
    await verify('ursula@example.com');

    const test = await page({ signedInWith: adminKey });
    const ui = test.page;
    const deletes: string[] = [];
    ui.on('request', (sent) => {
      if (sent.method() === 'DELETE') deletes.push(new URL(sent.url()).pathname + new URL(sent.url()).search);
    });
    await ui.goto(`${server.baseUrl}/#/users`);
    await settled(ui, 'Users');
    await ui.getByRole('heading', { level: 2, name: 'Users you manage' }).waitFor();
    await expect.poll(() => names(ui), { timeout: WAIT_MS }).toEqual([`${me.name} (you)`, 'Ursula User']);
    const mine = rowOf(ui, `${me.name} (you)`);
    expect(await cellOf(mine, 2).innerText()).toBe(me.email);
    expect(await cellOf(mine, 3).innerText()).toBe(me.organization.name);
    expect(await cellOf(mine, ROLES_COLUMN).innerText()).toBe('Admin');
    expect(await cellOf(rowOf(ui, 'Ursula User'), ROLES_COLUMN).innerText()).toBe('Read Only');
    expect(await cellOf(rowOf(ui, 'Ursula User'), 5).innerText()).toBe('yes');
    // Nobody removes themselves: no Delete in one's own row.
    expect(await mine.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    expect(await mine.getByRole('button', { name: 'Edit roles' }).count()).toBe(1);
    expect(await ui.getByRole('navigation', { name: 'Pages' }).innerText()).toMatch(/^1–2 of 2/);

    // Nina: added with the page's own form, as an Operator; the list shows her at once, not yet verified.
    const form = ui.getByRole('region', { name: 'Add a user' });
    await form.getByLabel('Name').fill('Nina Nobody');
    await form.getByLabel('E-mail').fill('nina@example.com');
    await form.getByLabel('First password').fill('nina-first');
    await form.getByLabel('Role', { exact: true }).selectOption({ label: 'Operator' });
    await form.getByRole('button', { name: 'Add the user' }).click();
    await form.getByRole('status').getByText('Nina Nobody was added.').waitFor();
    await expect
      .poll(() => names(ui), { timeout: WAIT_MS })
      .toEqual([`${me.name} (you)`, 'Ursula User', 'Nina Nobody']);
    expect(await cellOf(rowOf(ui, 'Nina Nobody'), 5).innerText()).toBe('not yet');
    await photograph(ui, 'users-list');

    // The search: part of a name, any case, kept in the URL once typing settles.
    const filters = ui.getByRole('search');
    await filters.getByLabel('Search').fill('URSU');
    await expect.poll(() => names(ui), { timeout: WAIT_MS }).toEqual(['Ursula User']);
    expect(ui.url()).toContain('search=URSU');
    await filters.getByLabel('Search').fill('nina@');
    await expect.poll(() => names(ui), { timeout: WAIT_MS }).toEqual(['Nina Nobody']);
    await filters.getByLabel('Search').fill('nobody-here');
    await ui.getByText('No user matches these filters.').waitFor();
    await filters.getByLabel('Search').fill('');
    await expect.poll(() => names(ui), { timeout: WAIT_MS }).toHaveLength(3);
    // The role filter.
    await filters.getByLabel('Has the role').selectOption({ label: 'Operator' });
    await expect.poll(() => names(ui), { timeout: WAIT_MS }).toEqual(['Nina Nobody']);
    expect(ui.url()).toContain('role=operator');
    await filters.getByLabel('Has the role').selectOption({ label: 'Any' });
    await filters.getByLabel('Search').fill('ursula');
    await expect.poll(() => names(ui), { timeout: WAIT_MS }).toEqual(['Ursula User']);

    // Ursula's roles, in the dialog: Read Only → Operator, and the row says so.
    await rowOf(ui, 'Ursula User').getByRole('button', { name: 'Edit roles' }).click();
    let dialog = ui.getByRole('dialog', { name: 'Roles of Ursula User' });
    const roles = dialog.getByRole('group', { name: 'Roles' });
    expect(await roles.getByRole('checkbox', { name: 'Read Only' }).isChecked()).toBe(true);
    expect(await roles.getByRole('checkbox', { name: 'Operator' }).isChecked()).toBe(false);
    expect(await roles.getByRole('checkbox', { name: 'Admin' }).isChecked()).toBe(false);
    // None ticked is refused here: the API would take an empty list as "unchanged".
    await roles.getByRole('checkbox', { name: 'Read Only' }).uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').getByText('Tick at least one role.').waitFor();
    await roles.getByRole('checkbox', { name: 'Operator' }).check();
    await axeCheck(ui, 'the roles dialog');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect
      .poll(() => cellOf(rowOf(ui, 'Ursula User'), ROLES_COLUMN).innerText(), { timeout: WAIT_MS })
      .toBe('Operator');
    expect((await call('GET', `/api/v1/user/${ursula.id}`)).roles).toEqual([
      { id: 'operator', name: 'Operator' },
    ]);

    // The only Admin (the one signed in) keeps the Admin role: the API's 409, in its words, at the form.
    await filters.getByLabel('Search').fill('');
    await expect.poll(() => names(ui), { timeout: WAIT_MS }).toHaveLength(3);
    await mine.getByRole('button', { name: 'Edit roles' }).click();
    dialog = ui.getByRole('dialog', { name: `Roles of ${me.name}` });
    await dialog.getByRole('checkbox', { name: 'Admin' }).uncheck();
    await dialog.getByRole('checkbox', { name: 'Read Only' }).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').getByText(LAST_ADMIN).waitFor();
    await photograph(ui, 'users-roles-last-admin');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await call('GET', '/api/v1/user/me')).roles).toEqual([{ id: 'admin', name: 'Admin' }]);
    expect(await cellOf(mine, ROLES_COLUMN).innerText()).toBe('Admin');

    // Ursula, now an Operator, signs in and makes an alert: her removal names it, and takes it (force=true).
    const ursulaKey = await signIn('ursula@example.com', 'ursula-first');
    await giveAlert(ursulaKey, orgId, 'Ursula’s alert');
    await rowOf(ui, 'Ursula User').getByRole('button', { name: 'Delete' }).click();
    dialog = ui.getByRole('dialog', { name: 'Delete Ursula User' });
    await dialog.getByText('This also removes 1 alert, 0 webhooks and 0 channels').waitFor();
    let confirm = dialog.getByRole('button', { name: 'Delete the user' });
    await expect.poll(() => confirm.isEnabled(), { timeout: WAIT_MS }).toBe(true);
    await photograph(ui, 'users-delete');
    await confirm.click();
    await dialog.waitFor({ state: 'detached' });
    await ui
      .getByRole('status')
      .getByText('Ursula User was removed, with 1 alert, 0 webhooks and 0 channels.')
      .waitFor();
    await expect.poll(() => names(ui), { timeout: WAIT_MS }).toEqual([`${me.name} (you)`, 'Nina Nobody']);
    expect((await request('GET', `/api/v1/user/${ursula.id}`)).status).toBe(404);
    // Her key went with her.
    expect((await request('GET', '/api/v1/user/me', { key: ursulaKey })).status).toBe(401);

    // Nina owns nothing when her dialog opens; she makes an alert meanwhile: the removal without force is
    // refused (409, in the API's words, in the dialog), which reads again what she owns, and the next goes.
    await verify('nina@example.com');
    const ninaKey = await signIn('nina@example.com', 'nina-first');
    const ninaId = (await call('GET', '/api/v2/user?search=nina')).results[0].id as string;
    await rowOf(ui, 'Nina Nobody').getByRole('button', { name: 'Delete' }).click();
    dialog = ui.getByRole('dialog', { name: 'Delete Nina Nobody' });
    await dialog.getByText('Nina Nobody owns no alerts, webhooks or channels.').waitFor();
    await giveAlert(ninaKey, orgId, 'Nina’s late alert');
    confirm = dialog.getByRole('button', { name: 'Delete the user' });
    await expect.poll(() => confirm.isEnabled(), { timeout: WAIT_MS }).toBe(true);
    await confirm.click();
    await dialog
      .getByRole('alert')
      .getByText(/^The user still owns 1 alert, 0 webhooks and 0 channels/)
      .waitFor();
    await dialog.getByText('This also removes 1 alert, 0 webhooks and 0 channels').waitFor();
    await expect.poll(() => confirm.isEnabled(), { timeout: WAIT_MS }).toBe(true);
    await confirm.click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => names(ui), { timeout: WAIT_MS }).toEqual([`${me.name} (you)`]);
    expect((await request('GET', `/api/v1/user/${ninaId}`)).status).toBe(404);
    expect((await call('GET', '/api/v2/user?search=nina')).total_count).toBe(0);

    // force=true only for the removals whose dialog said something else goes.
    expect(deletes).toEqual([
      `/api/v1/user/${ursula.id}?force=true`,
      `/api/v1/user/${ninaId}`,
      `/api/v1/user/${ninaId}?force=true`,
    ]);
    expect(test.problems).toEqual([]);
  }, 120_000);

  it('shows anyone else no list: only the note that an Admin adds users', async () => {
    await call('POST', '/api/v1/user', {
      body: { name: 'Olga Operator', email: 'olga@example.com', password: 'olga-first', roles: ['operator'] },
    });
    await verify('olga@example.com');
    const key = await signIn('olga@example.com', 'olga-first');
    const test = await page({ signedInWith: key });
    await test.page.goto(`${server.baseUrl}/#/users`);
    await settled(test.page, 'Users');
    await test.page.locator('.who').getByText('Olga Operator').waitFor();
    await test.page.getByRole('alert').getByText('Only an Admin adds users.').waitFor();
    expect(await test.page.getByRole('table').count()).toBe(0);
    expect(await test.page.getByRole('button', { name: 'Edit roles' }).count()).toBe(0);
    expect(test.problems).toEqual([]);
  }, 60_000);
});
