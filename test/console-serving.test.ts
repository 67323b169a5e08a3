import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, CONSOLE_DIR, consoleRoutes } from '../src/http/console.js';
import { createLogger } from '../src/observability/logger.js';
import { expectError } from './support/error-shape.js';
import { startTestApp, type TestApp } from './support/harness.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

let t: TestApp;
beforeAll(async () => {
  // Not a skip: a suite that passes without the console would hide that it is not served.
  if (!existsSync(join(CONSOLE_DIR, 'index.html'))) {
    throw new Error('The console is not built (no dist/console/index.html): run npm run build first.');
  }
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

function expectConsoleHeaders(res: { headers: Record<string, unknown> }) {
  expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
}

describe('the console', () => {
  it('serves index.html at / under a strict CSP, revalidated on every load', async () => {
    const res = await t.request('GET', '/', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expectConsoleHeaders(res);
    // The CSP allows no inline code: every script is a file, and no style is inline.
    const scripts = res.text.match(/<script\b[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toMatch(/\ssrc="\/assets\//);
    expect(res.text).not.toMatch(/<style\b|\sstyle=/);
  });

  it('serves its hashed assets as immutable, with their own types', async () => {
    const index = await t.request('GET', '/', { key: null });
    const script = /<script\b[^>]*\ssrc="(\/assets\/[^"]+\.js)"/.exec(index.text)?.[1];
    expect(script, index.text).toBeDefined();
    const res = await t.request('GET', script!, { key: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(res.headers['cache-control']).toBe(IMMUTABLE);
    expectConsoleHeaders(res);
  });

  it('leaves the API, unknown paths and the docs to the service', async () => {
    const api = await t.request('GET', '/api/v2/node', { key: null });
    expectError(api, 401, 'UNAUTHORIZED');
    expect(api.headers['content-security-policy']).toBeUndefined();

    for (const path of ['/nope', '/assets/nope-0123abcd.js', '/api/v2/nope']) {
      const res = await t.request('GET', path, { key: null });
      expectError(res, 404, 'NOT_FOUND');
    }

    const docs = await t.request('GET', '/docs/json', { key: null });
    expect(docs.status).toBe(200);
    expect(docs.headers['content-security-policy']).not.toBe(CONSOLE_CSP);
    const paths = Object.keys(docs.body.paths);
    expect(paths.length).toBeGreaterThan(10);
    const files = (path: string) => path === '/' || path === '/index.html' || path.startsWith('/assets/');
    expect(paths.filter(files)).toEqual([]);
  });
});

describe('without a build', () => {
  it('starts, with one warning that says how to build the console, and serves nothing', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const empty = mkdtempSync(join(tmpdir(), 'edgewatch-console-'));
    const app = Fastify({
      loggerInstance: createLogger('info', sink),
    }).withTypeProvider<TypeBoxTypeProvider>();
    try {
      await app.register(consoleRoutes, { root: empty });
      await app.ready();
      const warnings = lines.map((line) => JSON.parse(line)).filter((line) => line.level === 40);
      expect(warnings).toHaveLength(1);
      expect(warnings[0].msg).toContain('npm run build');
      expect((await app.inject({ method: 'GET', url: '/' })).statusCode).toBe(404);
    } finally {
      await app.close();
      rmSync(empty, { recursive: true });
    }
  });
});
