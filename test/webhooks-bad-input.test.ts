import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type RequestOptions, type TestApp } from './support/harness.js';
import { expectError } from './support/error-shape.js';
import { receiverAccess } from './support/webhooks.js';

let t: TestApp;
let hookId = '';
beforeAll(async () => {
  t = await startTestApp(receiverAccess());
  const created = await t.request('POST', '/api/v1/webhook', {
    body: { name: 'Existing', url: 'https://hooks.example.com/in', secret: 'existing-secret-0123' },
  });
  hookId = created.body.id as string;
});
afterAll(async () => {
  await t.close();
});

async function snapshot() {
  return t.ctx.db.selectFrom('webhooks').selectAll().orderBy('id').execute();
}

const valid = { name: 'Hook', url: 'https://hooks.example.com/edge' };
const json = (payload: string): RequestOptions => ({
  payload,
  headers: { 'content-type': 'application/json' },
});

type Case = [name: string, options: RequestOptions, status: number];

const bodyCases = (base: Record<string, unknown>): Case[] => [
  ['name is a number', { body: { ...base, name: 12 } }, 400],
  ['name is empty', { body: { ...base, name: '' } }, 400],
  ['name is huge', { body: { ...base, name: 'n'.repeat(129) } }, 400],
  ['url is a number', { body: { ...base, url: 5 } }, 400],
  ['url is huge', { body: { ...base, url: `https://example.com/${'p'.repeat(2050)}` } }, 400],
  ['url is http', { body: { ...base, url: 'http://example.com/' } }, 400],
  ['url has user-info', { body: { ...base, url: 'https://me:pw@example.com/' } }, 400],
  ['url is IPv6 link-local literal', { body: { ...base, url: 'https://[fe80::1]:8443/' } }, 422],
  ['url is decimal private literal', { body: { ...base, url: 'https://167772161/' } }, 422],
  ['url is link-local', { body: { ...base, url: 'https://169.254.169.254/' } }, 422],
  ['extra field', { body: { ...base, colour: 'blue' } }, 400],
  [
    'Header and its alias headers at once',
    { body: { ...base, Header: { 'X-A': '1' }, headers: { 'X-A': '1' } } },
    400,
  ],
  [
    'headers (the alias) breaking the header rules',
    { body: { ...base, headers: { Host: 'evil.example' } } },
    400,
  ],
  ['headers (the alias) is an array', { body: { ...base, headers: ['X-A'] } }, 400],
  ['Header is an array', { body: { ...base, Header: ['X-A'] } }, 400],
  ['Header value is a number', { body: { ...base, Header: { 'X-A': 1 } } }, 400],
  ['four headers', { body: { ...base, Header: { a: '1', b: '2', c: '3', d: '4' } } }, 400],
  ['headers too long', { body: { ...base, Header: { 'X-A': 'v'.repeat(2100) } } }, 400],
  ['header with CRLF', { body: { ...base, Header: { 'X-A': 'v\r\nX-B: w' } } }, 400],
  ['forbidden header', { body: { ...base, Header: { 'x-service-timestamp': '1' } } }, 400],
  ['header name with space', { body: { ...base, Header: { 'X A': '1' } } }, 400],
  ['secret too short', { body: { ...base, secret: 'short' } }, 400],
  ['secret with a space', { body: { ...base, secret: 'has a space in it 123' } }, 400],
  ['secret not ASCII', { body: { ...base, secret: 'ünïcödé-secret-value' } }, 400],
  ['secret too long', { body: { ...base, secret: 's'.repeat(257) } }, 400],
  ['metadata not an object', { body: { ...base, metadata: 'x' } }, 400],
  ['metadata with unknown field', { body: { ...base, metadata: { tags: {} } } }, 400],
  ['label value a number', { body: { ...base, metadata: { labels: { a: 1 } } } }, 400],
  ['body is an array', { body: [base] }, 400],
  ['body is a string', json('"hello"'), 400],
  ['malformed JSON', json('{"name": "x",'), 400],
  [
    'not JSON content type',
    { payload: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    415,
  ],
  ['too large', { body: { ...base, name: 'x'.repeat(70_000) } }, 413],
];

describe('POST /api/v1/webhook refuses bad input and writes nothing', () => {
  it.each([
    ...bodyCases(valid),
    ['missing name', { body: { url: valid.url } }, 400] as Case,
    ['empty body', json(''), 400] as Case,
  ])('%s', async (_name, options, status) => {
    const before = await snapshot();
    const res = await t.request('POST', '/api/v1/webhook', options);
    expectError(res, status, res.body?.errorCode ?? '');
    expect(res.status).toBe(status);
    expect(await snapshot()).toEqual(before);
  });
});

describe('PUT /api/v1/webhook/{id} refuses bad input and changes nothing', () => {
  it.each([...bodyCases({}), ['nothing to change', { body: {} }, 400] as Case])(
    '%s',
    async (_name, options, status) => {
      const before = await snapshot();
      const res = await t.request('PUT', `/api/v1/webhook/${hookId}`, options);
      expectError(res, status, res.body?.errorCode ?? '');
      expect(res.status).toBe(status);
      expect(await snapshot()).toEqual(before);
    },
  );
});

describe('POST /api/v1/webhook/{id}/test refuses bad input', () => {
  const cases: Case[] = [
    ['no body', json(''), 400],
    ['unknown type', { body: { alert_type: 'NODE_EXPLODED' } }, 400],
    ['lower-case type', { body: { alert_type: 'node_state_change' } }, 400],
    ['type is a number', { body: { alert_type: 1 } }, 400],
    ['extra field', { body: { alert_type: 'NODE_UPGRADE', url: 'https://x' } }, 400],
    ['not JSON', { payload: 'x', headers: { 'content-type': 'text/plain' } }, 415],
  ];
  it.each(cases)('%s', async (_name, options, status) => {
    const res = await t.request('POST', `/api/v1/webhook/${hookId}/test`, options);
    expectError(res, status, res.body?.errorCode ?? '');
  });
});

describe('verify and delete take no body but accept an empty JSON one', () => {
  it('verify with Content-Type: application/json and no body runs', async () => {
    const res = await t.request('POST', `/api/v1/webhook/${hookId}/verify`, json(''));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('FAILED');
  });

  it('an unknown id is 404 on every route', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/webhook/unknown'],
      ['POST', '/api/v1/webhook/unknown/verify'],
      ['DELETE', '/api/v1/user/webhook/unknown'],
    ] as const) {
      expectError(await t.request(method, url), 404, 'NOT_FOUND');
    }
  });
});
