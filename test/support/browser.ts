import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AxeResults, ImpactValue } from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { CONSOLE_DIR } from '../../src/http/console.js';
import { dialect } from './database.js';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONSOLE_SOURCE = join(PROJECT_ROOT, 'console');
export const RESULTS_DIR = join(PROJECT_ROOT, 'test-results', 'console');

/** Debian's chromium: playwright-core downloads no browser of its own. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export const WIDE = { width: 1280, height: 800 };
export const NARROW = { width: 390, height: 844 };
/** Generous for a loaded 2-core machine; a wait that needs longer is a failure, not slowness. */
export const WAIT_MS = 15_000;

/**
 * The console as `vite build` left it in dist/console; a build older than console/src would test stale code
 * without saying so, so both are refused (a skip would hide that nothing was tested).
 */
export function assertConsoleBuilt(): void {
  const index = join(CONSOLE_DIR, 'index.html');
  if (!existsSync(index)) {
    throw new Error('The console is not built (no dist/console/index.html): run npm run build first.');
  }
  const newestSource = newestChange(CONSOLE_SOURCE, ['src', 'public', 'index.html', 'vite.config.ts']);
  if (newestSource > statSync(index).mtimeMs) {
    throw new Error('The console build is older than console/: run npm run build first.');
  }
}

function newestChange(dir: string, names: string[]): number {
  let newest = 0;
  for (const name of names) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    newest = Math.max(newest, stat.isDirectory() ? newestChange(path, readdirSync(path)) : stat.mtimeMs);
  }
  return newest;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export interface TestPage {
  page: Page;
  context: BrowserContext;
  /** Uncaught exceptions in the page and Content-Security-Policy refusals: each is a bug of the console. */
  problems: string[];
}

/**
 * A new context (its own sessionStorage, cookies and routes) and one page in it. The page's CSP stays in
 * force (no bypassCSP): a console that breaks its own policy must fail here as it would for a user.
 */
export async function openPage(
  browser: Browser,
  options: { viewport?: { width: number; height: number }; signedInWith?: string } = {},
): Promise<TestPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? WIDE,
    colorScheme: 'light',
    locale: 'en-GB',
    timezoneId: 'UTC',
    reducedMotion: 'reduce',
  });
  context.setDefaultTimeout(WAIT_MS);
  if (options.signedInWith !== undefined) {
    // sessionStorage belongs to one tab: set before each document's own scripts run, as a sign-in would.
    await context.addInitScript(
      (key) => sessionStorage.setItem('edgewatch.apiKey', key),
      options.signedInWith,
    );
  }
  const page = await context.newPage();
  return { page, context, problems: watch(page) };
}

/** Another tab in the same context (it shares the routes and init scripts, not the sessionStorage). */
export async function anotherPage(context: BrowserContext): Promise<TestPage> {
  const page = await context.newPage();
  return { page, context, problems: watch(page) };
}

function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) {
      problems.push(`CSP: ${message.text()}`);
    }
  });
  return problems;
}

// The page's own globals, for the functions that run in it: the test code is type-checked without the DOM's types.
declare const sessionStorage: {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
};
declare const document: unknown;

/** Waits until a page has rendered: its heading is there and nothing says "Loading…". */
export async function settled(page: Page, heading: string | RegExp): Promise<void> {
  const title = page.getByRole('heading', { level: 1, name: heading });
  const failure = async (error?: unknown) => {
    const shown = await page
      .locator('body')
      .innerText({ timeout: 1_000 })
      .catch(() => '(nothing)');
    return new Error(`no heading ${String(heading)} at ${page.url()}; the page shows:\n${shown}`, {
      cause: error,
    });
  };
  try {
    await title.waitFor();
  } catch (error) {
    throw await failure(error);
  }
  await expect.poll(() => page.locator('.loading').count(), { timeout: WAIT_MS }).toBe(0);
  // A render that throws unmounts the whole console, which also leaves nothing loading.
  if (!(await title.isVisible())) throw await failure();
}

export async function signInWithKey(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByRole('button', { name: 'API key', exact: true }).click();
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in with the key' }).click();
  await settled(page, 'Fleet');
}

/**
 * Signs in with e-mail and password; with `newPassword`, the first sign-in's password change too. Ends on
 * whatever the console shows next (the Fleet page, or the form with its error).
 */
export async function signInWithPassword(
  page: Page,
  baseUrl: string,
  credentials: { email: string; password: string; newPassword?: string },
): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('E-mail').fill(credentials.email);
  await page.getByLabel('Password', { exact: true }).fill(credentials.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  if (credentials.newPassword === undefined) return;
  await page.getByLabel('New password', { exact: true }).fill(credentials.newPassword);
  await page.getByLabel('Repeat the new password').fill(credentials.newPassword);
  await page.getByRole('button', { name: 'Change password and sign in' }).click();
}

/** The key the console keeps for this tab. */
export function sessionKey(page: Page): Promise<string | null> {
  return page.evaluate(() => sessionStorage.getItem('edgewatch.apiKey'));
}

declare global {
  var axe: { run(context: unknown, options: unknown): Promise<AxeResults> } | undefined;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const FAILING: ImpactValue[] = ['serious', 'critical'];

/**
 * axe-core on the page as it is now, in the light and the dark colour scheme (the console has both); fails
 * on any serious or critical violation with a readable list. axe goes in through page.evaluate, which the
 * DevTools protocol runs outside the page's CSP, so the console keeps its real `script-src 'self'` (a
 * script tag would be refused, and bypassCSP would also hide the console's own CSP faults from these tests).
 */
export async function axeCheck(page: Page, what: string): Promise<void> {
  if (!(await page.evaluate(() => globalThis.axe !== undefined))) await page.evaluate(axeSource);
  const list: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const results = await page.evaluate(() => globalThis.axe!.run(document, { resultTypes: ['violations'] }));
    // No rule run at all would pass everything.
    expect(results.passes.length, `axe checked nothing on ${what}`).toBeGreaterThan(0);
    for (const violation of results.violations) {
      if (!FAILING.includes(violation.impact ?? null)) continue;
      const nodes = violation.nodes.map(
        (node) => `    ${node.target.join(' ')}: ${node.failureSummary ?? ''}`,
      );
      list.push(
        `- ${violation.id} (${violation.impact}, ${colorScheme}): ${violation.help}\n${nodes.join('\n')}`,
      );
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  expect(list, `axe on ${what} found serious or critical violations:\n${list.join('\n')}`).toEqual([]);
}

/** A full-page PNG at the page's current width: test-results/console/<dialect>/<name>-<width>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = join(RESULTS_DIR, dialect);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}-${page.viewportSize()?.width ?? 0}.png`);
  await page.screenshot({ path, fullPage: true, animations: 'disabled', caret: 'hide' });
  return path;
}

/**
 * At 1280 px and then at 390 px (the page is narrowed in place, and widened again after): axe-core, then a
 * full-page screenshot. Both widths, because a narrow layout has its own faults (a region that scrolls, a
 * control pushed off screen).
 */
export async function checkAndPhotograph(page: Page, name: string): Promise<void> {
  const before = page.viewportSize() ?? WIDE;
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await axeCheck(page, `${name} at ${viewport.width} px`);
    await screenshot(page, name);
  }
  await page.setViewportSize(before);
}
