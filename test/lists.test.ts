import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/error-shape.js';
import { startTestApp, type TestApp } from './support/harness.js';

/**
 * Every paged list (docs/rules/api.md#lists): `{total_count, results}`, page from 0, size 1–100
 * (default 25).
 */
const LISTS = [
  '/api/v2/role',
  '/api/v2/org',
  '/api/v2/apikey',
  '/api/v2/mysubscriptions',
  '/api/v2/node',
  '/api/v2/event',
  '/api/v2/tunnel',
  '/api/v2/service',
  '/api/v2/notification',
];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

describe.each(LISTS)('GET %s', (path) => {
  it.each([
    ['size=0', 'size'],
    ['size=101', 'size'],
    ['size=-1', 'size'],
    ['size=ten', 'size'],
    ['size=2.5', 'size'],
    ['size=', 'size'],
    ['page=-1', 'page'],
    ['page=1.5', 'page'],
    ['page=first', 'page'],
    ['page=1000001', 'page'],
    ['limit=10', 'limit'],
    ['offset=5', 'offset'],
  ])('answers 400 for ?%s, naming %s', async (query, field) => {
    const res = await t.request('GET', `${path}?${query}`);
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it.each(['size=1', 'size=100', 'page=0&size=25', 'page=1000000'])('accepts ?%s', async (query) => {
    const res = await t.request('GET', `${path}?${query}`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(Object.keys(res.body)).toEqual(['total_count', 'results']);
  });

  it('answers a page past the end with no results and the same total_count', async () => {
    const whole = await t.request('GET', `${path}?size=100`);
    const past = await t.request('GET', `${path}?page=50&size=100`);
    expect(past.body).toStrictEqual({ total_count: whole.body.total_count, results: [] });
  });

  it('states its order and paging in the OpenAPI description', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const operation = doc.paths[path].get;
    expect(operation.description).toMatch(/Order: .+\./);
    const names = operation.parameters.map((parameter: { name: string }) => parameter.name);
    expect(names).toEqual(expect.arrayContaining(['page', 'size']));
  });
});
