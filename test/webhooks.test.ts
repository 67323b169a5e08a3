import { setTimeout as sleep } from 'node:timers/promises';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceContext } from '../src/context.js';
import { authenticate } from '../src/features/apikeys/service.js';
import * as webhookRepo from '../src/features/webhooks/repo.js';
import {
  createWebhook as createWebhookAs,
  deleteWebhook as deleteWebhookAs,
  updateWebhook,
} from '../src/features/webhooks/service.js';
import { touchSubscriptions } from '../src/features/users/repo.js';
import { verifyWebhook } from '../src/features/webhooks/verify.js';
import type { Clock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { hmacHex, verifySignature } from '../src/receiver/index.js';
import { NOTIFICATION_TYPES } from '../src/features/notifications/types.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/harness.js';
import {
  answerBytes,
  answerJson,
  delayed,
  redirectTo,
  startHttpsReceiver,
  trickle,
  type HttpsReceiver,
  type ReceiverHandler,
} from './support/https-receiver.js';
import { testCertificates } from './support/tls.js';
import { correctEndpoint, receiverAccess } from './support/webhooks.js';

const DISABLED_BODY =
  '{"statusCode":422,"errorCode":"UNPROCESSABLE_ENTITY","message":"The webhook is disabled and cannot be associated with the alert."}';

let t: TestApp;
let good: HttpsReceiver;
let secret = '';
let operatorKey = '';
let operatorId = '';

beforeAll(async () => {
  t = await startTestApp(receiverAccess());
  good = await startHttpsReceiver(
    testCertificates().server,
    correctEndpoint(() => secret),
  );
  const operator = await t.userWithRoles(['operator']);
  operatorKey = operator.key;
  operatorId = operator.id;
});
afterAll(async () => {
  await good.close();
  await t.close();
});

async function createWebhook(body: Record<string, unknown>, key = operatorKey) {
  const res = await t.request('POST', '/api/v1/webhook', {
    key,
    body: { name: 'Hook', url: `${good.url}/hook`, ...body },
  });
  return res;
}

async function deleteAll(key = operatorKey) {
  const list = await t.request('GET', '/api/v2/webhook', { key });
  for (const hook of list.body as { id: string }[]) {
    await t.request('DELETE', `/api/v1/user/webhook/${hook.id}?force=true`, { key });
  }
}

/** Runs a verification against a receiver that answers with `handler`, on a fresh webhook. */
async function verifyWith(handler: ReceiverHandler, receiver: HttpsReceiver = good) {
  await deleteAll();
  receiver.handle(handler);
  const created = await t.request('POST', '/api/v1/webhook', {
    key: operatorKey,
    body: { name: 'Hook', url: `${receiver.url}/hook`, secret: 'verify-secret-0123456789' },
  });
  expect(created.status).toBe(201);
  const started = Date.now();
  const res = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
  const elapsed = Date.now() - started;
  const after = await t.request('GET', `/api/v1/webhook/${created.body.id}`, { key: operatorKey });
  receiver.handle(correctEndpoint(() => secret));
  return { res, elapsed, after, id: created.body.id as string };
}

/** Holds the first `count` requests until `release()`, then lets `then` answer them; later ones at once. */
function holding(then: ReceiverHandler, count = 1) {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived = () => {};
  const allArrived = new Promise<void>((resolve) => (arrived = resolve));
  let seen = 0;
  const handler: ReceiverHandler = async (request, response) => {
    seen += 1;
    if (seen <= count) {
      if (seen === count) arrived();
      await released;
    }
    await then(request, response);
  };
  return { handler, allArrived, release };
}

/** The operator's service context on a clock of the test's choosing (and optionally another db handle). */
async function operatorContext(clock: Clock, db = t.ctx.db): Promise<ServiceContext> {
  const actor = await authenticate(t.ctx, operatorKey);
  if (actor === undefined) throw new Error('the operator key did not authenticate');
  return { ...t.ctx, clock, db, actor };
}

/** A plugin that stops the first query returning a webhook row until `open()`: an edit paused after its read. */
function pauseAfterWebhookRead() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  let paused = () => {};
  const reached = new Promise<void>((resolve) => (paused = resolve));
  let done = false;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    async transformResult(args) {
      if (!done && args.result.rows.some((row) => 'secret_sealed' in row)) {
        done = true;
        paused();
        await opened;
      }
      return args.result;
    },
  };
  return { plugin, reached, open };
}

const challengedPath = (url: string | undefined) => new URL(url ?? '', 'https://x').pathname;

describe('create, read, list', () => {
  it('creates a disabled webhook and returns the secret only then', async () => {
    await deleteAll();
    const res = await createWebhook({ metadata: { labels: { team: 'ops' } }, Header: { 'X-Team': 'ops' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['id', 'is_enabled', 'name', 'secret', 'url']);
    expect(res.body.is_enabled).toBe(false);
    expect(res.body.secret).toMatch(/^[\x21-\x7E]{43,}$/);

    const one = await t.request('GET', `/api/v1/webhook/${res.body.id}`, { key: operatorKey });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      id: res.body.id,
      name: 'Hook',
      url: `${good.url}/hook`,
      metadata: { labels: { team: 'ops' } },
      headers: { 'X-Team': 'ops' },
      is_enabled: false,
      disabled_reason: 'unverified',
      subscription_count: 0,
    });
    expect(one.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(one.body.created_by).toMatchObject({ name: expect.any(String) });
    expect(one.body).not.toHaveProperty('secret');
    expect(one.text).not.toContain(res.body.secret);

    const list = await t.request('GET', '/api/v2/webhook/', { key: operatorKey });
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body).toEqual([one.body]);
    expect(list.text).not.toContain(res.body.secret);
    expect(t.logs.join('')).not.toContain(res.body.secret);
  });

  it('keeps the secret encrypted at rest', async () => {
    const res = await createWebhook({ secret: 'my-very-own-secret-value' });
    const row = await t.ctx.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('my-very-own-secret-value');
    expect(t.ctx.secretBox.open(row.secret_sealed)).toBe('my-very-own-secret-value');
  });

  it('limits webhooks per user and counts per user', async () => {
    await deleteAll();
    for (let i = 0; i < 3; i += 1) expect((await createWebhook({ name: `Hook ${i}` })).status).toBe(201);
    const fourth = await createWebhook({ name: 'Hook 4' });
    expect(fourth.status).toBe(422);
    expect(fourth.body).toMatchObject({ statusCode: 422, errorCode: 'UNPROCESSABLE_ENTITY' });
    expect((await createWebhook({ name: 'Admin hook' }, ADMIN_KEY)).status).toBe(201);
    await deleteAll();
    await deleteAll(ADMIN_KEY);
  });

  it('refuses a literal non-public host with 422 and other URL faults with 400', async () => {
    expect((await createWebhook({ url: 'https://10.0.0.5/hook' })).status).toBe(422);
    // 2130706433 is 127.0.0.1, inside this app's WEBHOOK_ALLOWED_NETWORKS.
    expect((await createWebhook({ url: 'https://2130706433:443/hook' })).status).toBe(201);
    expect((await createWebhook({ url: 'http://example.com/hook' })).status).toBe(400);
    expect((await createWebhook({ url: 'https://user:pw@example.com/hook' })).status).toBe(400);
    await deleteAll();
  });
});

describe('verify', () => {
  it('enables the webhook when the endpoint answers the challenge', async () => {
    await deleteAll();
    const created = await createWebhook({ Header: { 'X-Team': 'ops', Authorization: 'Bearer token-1' } });
    secret = created.body.secret as string;
    const before = good.requests.length;
    const res = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: created.body.id, status: 'SUCCESS', message: expect.any(String) });

    const call = good.requests[before];
    expect(call?.method).toBe('GET');
    const url = new URL(call?.url ?? '', 'https://x');
    expect(url.pathname).toBe('/hook');
    expect(url.searchParams.get('challenge')).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(call?.headers['x-team']).toBe('ops');
    expect(call?.headers.authorization).toBe('Bearer token-1');
    expect(Math.abs(Number(call?.headers['x-service-timestamp']) - Date.now())).toBeLessThan(10_000);
    expect(call?.headers['user-agent']).toMatch(/edgewatch/);

    const after = await t.request('GET', `/api/v1/webhook/${created.body.id}`, { key: operatorKey });
    expect(after.body).toMatchObject({ is_enabled: true, disabled_reason: null });

    const again = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ statusCode: 409, errorCode: 'CONFLICT' });
  });

  it('keeps an existing query string and adds the challenge to it', async () => {
    await deleteAll();
    const created = await createWebhook({ url: `${good.url}/hook?tenant=7` });
    secret = created.body.secret as string;
    const before = good.requests.length;
    const res = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    expect(res.body.status).toBe('SUCCESS');
    const url = new URL(good.requests[before]?.url ?? '', 'https://x');
    expect(url.searchParams.get('tenant')).toBe('7');
    expect(url.searchParams.get('challenge')).not.toBeNull();
  });

  it('keeps the stored query byte for byte and appends the challenge', async () => {
    await deleteAll();
    const created = await createWebhook({ url: `${good.url}/hook?a=b%20c&flag&x=1+2` });
    secret = created.body.secret as string;
    const before = good.requests.length;
    const res = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    expect(res.body.status).toBe('SUCCESS');
    const sent = good.requests[before]?.url ?? '';
    expect(sent).toMatch(/^\/hook\?a=b%20c&flag&x=1\+2&challenge=[A-Za-z0-9_-]{32,}$/);
  });

  it('answers one of two simultaneous verifies with SUCCESS and the other with 409', async () => {
    await deleteAll();
    const created = await createWebhook({});
    secret = created.body.secret as string;
    // Both challenges are answered only once both have arrived: both verifies loaded the disabled webhook.
    const both = holding(
      correctEndpoint(() => secret),
      2,
    );
    good.handle(both.handler);
    const verify = () => t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    const pending = Promise.all([verify(), verify()]);
    await both.allArrived;
    both.release();
    const answers = await pending;
    good.handle(correctEndpoint(() => secret));
    const statuses = answers.map((res) => (res.status === 200 ? res.body.status : res.status)).sort();
    expect(statuses).toEqual([409, 'SUCCESS']);
    const conflict = answers.find((res) => res.status === 409);
    expect(conflict?.body).toMatchObject({ statusCode: 409, errorCode: 'CONFLICT' });
    expect(conflict?.body.message).toMatch(/already verified and enabled/);
  });

  /** Verifies a new webhook, running `meanwhile` while the endpoint holds the challenge. */
  async function verifyWhile(meanwhile: (id: string) => Promise<void>) {
    await deleteAll();
    const created = await createWebhook({});
    secret = created.body.secret as string;
    const held = holding(correctEndpoint(() => secret));
    good.handle(held.handler);
    const pending = t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    await held.allArrived;
    await meanwhile(created.body.id as string);
    held.release();
    const res = await pending;
    good.handle(correctEndpoint(() => secret));
    return { id: created.body.id as string, res };
  }

  it('answers 404 when the webhook is deleted while the endpoint is being called', async () => {
    const { res } = await verifyWhile(async (id) => {
      const deleted = await t.request('DELETE', `/api/v1/user/webhook/${id}`, { key: operatorKey });
      expect(deleted.status).toBe(200);
    });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ statusCode: 404, errorCode: 'NOT_FOUND' });
  });

  it('fails, and stays disabled, when the webhook is edited while the endpoint is being called', async () => {
    const { id, res } = await verifyWhile(async (webhookId) => {
      const edited = await t.request('PUT', `/api/v1/webhook/${webhookId}`, {
        key: operatorKey,
        body: { url: `${good.url}/elsewhere` },
      });
      expect(edited.status).toBe(200);
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'FAILED', message: expect.stringMatching(/edited while/) });
    const read = await t.request('GET', `/api/v1/webhook/${id}`, { key: operatorKey });
    expect(read.body).toMatchObject({ is_enabled: false, url: `${good.url}/elsewhere` });
  });

  it('does not let a verify that loaded before a second edit in the same millisecond enable', async () => {
    await deleteAll();
    const frozenAt = Date.now();
    const ctx = await operatorContext({ now: () => frozenAt });
    secret = 'frozen-clock-secret-0123';
    const created = await createWebhookAs(ctx, { name: 'Frozen', url: `${good.url}/hook-0`, secret });
    await updateWebhook(ctx, created.id, { url: `${good.url}/hook-1` });
    const held = holding(correctEndpoint(() => secret));
    good.handle(held.handler);
    const stale = verifyWebhook(ctx, created.id);
    await held.allArrived;
    // Another verify of the same version succeeds meanwhile, then the webhook is edited again.
    expect((await verifyWebhook(ctx, created.id)).status).toBe('SUCCESS');
    await updateWebhook(ctx, created.id, { url: `${good.url}/hook-2` });
    held.release();
    const outcome = await stale;
    good.handle(correctEndpoint(() => secret));
    expect(outcome).toMatchObject({ status: 'FAILED', message: expect.stringMatching(/edited while/) });
    const row = await webhookRepo.findOwnWebhook(t.ctx.db, created.id, operatorId);
    expect(row).toMatchObject({ url: `${good.url}/hook-2`, is_enabled: 0, disabled_reason: 'edited' });
  });

  it('serializes two edits in the same millisecond: a verify between them cannot enable an unchallenged URL', async () => {
    await deleteAll();
    const frozenAt = Date.now();
    const ctx = await operatorContext({ now: () => frozenAt });
    secret = 'frozen-clock-secret-0456';
    const created = await createWebhookAs(ctx, { name: 'Raced', url: `${good.url}/hook-0`, secret });
    const challenged: string[] = [];
    const held = holding((request, response) => {
      challenged.push(challengedPath(request.url));
      return correctEndpoint(() => secret)(request, response);
    });
    good.handle(held.handler);

    // The first edit stops right after reading the webhook; the second is sent meanwhile.
    const gate = pauseAfterWebhookRead();
    const slowCtx = { ...ctx, db: ctx.db.withPlugin(gate.plugin) };
    const slow = updateWebhook(slowCtx, created.id, { url: `${good.url}/hook-slow` });
    await gate.reached;
    const fast = updateWebhook(ctx, created.id, { name: 'Fast' });
    // Unserialized, the second edit commits now; serialized, it waits for the first one's lock.
    await Promise.race([fast, sleep(300)]);
    const verify = verifyWebhook(ctx, created.id);
    await Promise.race([held.allArrived, sleep(300)]);
    gate.open();
    const answers = await Promise.all([slow, fast]);
    held.release();
    const outcome = await verify;
    good.handle(correctEndpoint(() => secret));

    const row = await webhookRepo.findOwnWebhook(t.ctx.db, created.id, operatorId);
    if (row === undefined) throw new Error('the webhook is gone');
    if (row.is_enabled === 1) {
      expect(outcome.status).toBe('SUCCESS');
      expect(challenged).toContain(challengedPath(row.url));
    } else {
      expect(outcome.status).toBe('FAILED');
    }
    // The edit that committed last answers with the row as it now is, not with what it read first.
    expect(answers).toContainEqual({
      id: created.id,
      name: row.name,
      url: row.url,
      is_enabled: false,
      secret,
    });
    expect(row).toMatchObject({ name: 'Fast', url: `${good.url}/hook-slow` });
  });

  it('answers 404 to an edit of a webhook deleted while the edit waited', async () => {
    await deleteAll();
    const ctx = await operatorContext(t.ctx.clock);
    const created = await createWebhookAs(ctx, { name: 'Doomed', url: `${good.url}/hook` });
    // The delete stops inside its transaction, holding the user's lock, right after finding the webhook.
    const gate = pauseAfterWebhookRead();
    const deleting = deleteWebhookAs({ ...ctx, db: ctx.db.withPlugin(gate.plugin) }, created.id, false);
    await gate.reached;
    const editing = updateWebhook(ctx, created.id, { name: 'Too late' }).then(
      () => 'edited',
      (error: unknown) => error,
    );
    await sleep(100);
    gate.open();
    expect((await deleting).status).toBe('SUCCESS');
    expect(await editing).toMatchObject({ statusCode: 404, errorCode: 'NOT_FOUND' });
  });

  it('disables on edit, returns the secret, and verifies again with a new secret', async () => {
    await deleteAll();
    const created = await createWebhook({});
    secret = created.body.secret as string;
    await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });

    const renamed = await t.request('PUT', `/api/v1/webhook/${created.body.id}`, {
      key: operatorKey,
      body: { name: 'Renamed' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({
      id: created.body.id,
      name: 'Renamed',
      url: `${good.url}/hook`,
      is_enabled: false,
      secret,
    });
    const read = await t.request('GET', `/api/v1/webhook/${created.body.id}`, { key: operatorKey });
    expect(read.body).toMatchObject({ is_enabled: false, disabled_reason: 'edited', name: 'Renamed' });

    const rekeyed = await t.request('PUT', `/api/v1/webhook/${created.body.id}`, {
      key: operatorKey,
      body: { secret: 'a-brand-new-secret-0001' },
    });
    expect(rekeyed.body.secret).toBe('a-brand-new-secret-0001');
    // The receiver still answers with the old secret: verification must fail.
    const stale = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    expect(stale.body.status).toBe('FAILED');
    secret = 'a-brand-new-secret-0001';
    const fresh = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    expect(fresh.body.status).toBe('SUCCESS');
  });

  it('refuses an edit with nothing to change and a bad edit, changing nothing', async () => {
    const created = await createWebhook({});
    expect(
      (await t.request('PUT', `/api/v1/webhook/${created.body.id}`, { key: operatorKey, body: {} })).status,
    ).toBe(400);
    const bad = await t.request('PUT', `/api/v1/webhook/${created.body.id}`, {
      key: operatorKey,
      body: { Header: { Host: 'x' } },
    });
    expect(bad.status).toBe(400);
    const read = await t.request('GET', `/api/v1/webhook/${created.body.id}`, { key: operatorKey });
    expect(read.body.disabled_reason).toBe('unverified');
    expect(read.body.headers).toEqual({});
  });
});

describe('verify failures: each with its own message, the webhook stays disabled', () => {
  const challengeOf = (url: string) => new URL(url, 'https://x').searchParams.get('challenge') ?? '';
  const rightFor = (request: { url: string; headers: Record<string, unknown> }) =>
    hmacHex(
      'verify-secret-0123456789',
      String(request.headers['x-service-timestamp']),
      challengeOf(request.url),
    );

  const cases: [string, () => ReceiverHandler, RegExp][] = [
    [
      'wrong HMAC',
      () => (request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ challenge: challengeOf(request.url), challenge_response: 'ab'.repeat(32) }),
        );
      },
      /challenge_response" is wrong/,
    ],
    [
      'wrong challenge',
      () => (request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ challenge: 'something-else', challenge_response: rightFor(request) }));
      },
      /differs/,
    ],
    ['non-JSON', () => answerBytes(10), /not JSON/],
    ['status 500', () => answerJson(500, { error: 'boom' }), /status 500/],
    ['redirect', () => redirectTo('https://example.com/elsewhere'), /status 302/],
  ];
  it.each(cases)('%s', async (_name, handler, message) => {
    const { res, after } = await verifyWith(handler());
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('FAILED');
    expect(res.body.message).toMatch(message);
    expect(after.body.is_enabled).toBe(false);
  });

  it('a 3.5 s delay times out after 3 s', async () => {
    const { res, elapsed, after } = await verifyWith(delayed(3_500, answerJson(200, {})));
    expect(res.body.status).toBe('FAILED');
    expect(res.body.message).toMatch(/3 s/);
    expect(elapsed).toBeLessThan(4_000);
    expect(after.body.is_enabled).toBe(false);
  });

  it('a slowly trickling body cannot stretch the deadline', async () => {
    const { res, elapsed } = await verifyWith(trickle(200, 40));
    expect(res.body.status).toBe('FAILED');
    expect(res.body.message).toMatch(/3 s/);
    expect(elapsed).toBeLessThan(4_000);
  });

  it('a self-signed certificate fails', async () => {
    const selfSigned = await startHttpsReceiver(testCertificates().selfSigned);
    try {
      const { res, after } = await verifyWith(answerJson(200, {}), selfSigned);
      expect(res.body.status).toBe('FAILED');
      expect(res.body.message).toMatch(/certificate/i);
      expect(res.body.message).toMatch(/self-signed|not trusted/i);
      expect(after.body.is_enabled).toBe(false);
    } finally {
      await selfSigned.close();
    }
  });

  it('a certificate for another host name fails', async () => {
    const other = await startHttpsReceiver(testCertificates().otherName);
    try {
      const { res } = await verifyWith(answerJson(200, {}), other);
      expect(res.body.status).toBe('FAILED');
      expect(res.body.message).toMatch(/host/i);
    } finally {
      await other.close();
    }
  });

  it('a name that does not resolve fails', async () => {
    await deleteAll();
    const created = await createWebhook({ url: 'https://edgewatch-test.invalid/hook' });
    const res = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    expect(res.body.status).toBe('FAILED');
    expect(res.body.message).toMatch(/resolve/);
  });

  it('a refused connection fails', async () => {
    const closed = await startHttpsReceiver(testCertificates().server);
    const port = closed.port;
    await closed.close();
    await deleteAll();
    const created = await createWebhook({ url: `https://localhost:${port}/hook` });
    const res = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, { key: operatorKey });
    expect(res.body.status).toBe('FAILED');
    expect(res.body.message).toMatch(/refused/);
  });

  it('a name resolving to a blocked address fails without contacting it', async () => {
    const strict = await startTestApp({ extraTrustedCertificates: [testCertificates().ca] });
    try {
      const before = good.requests.length;
      const created = await strict.request('POST', '/api/v1/webhook', {
        body: { name: 'Local', url: `${good.url}/hook` },
      });
      expect(created.status).toBe(201);
      const res = await strict.request('POST', `/api/v1/webhook/${created.body.id}/verify`);
      expect(res.body.status).toBe('FAILED');
      expect(res.body.message).toMatch(/not allowed/);
      expect(good.requests.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});

describe('test operation', () => {
  let hookId = '';
  beforeAll(async () => {
    await deleteAll();
    const created = await createWebhook({ Header: { 'X-Team': 'ops' } });
    hookId = created.body.id as string;
    secret = created.body.secret as string;
    good.handle(correctEndpoint(() => secret));
    await t.request('POST', `/api/v1/webhook/${hookId}/verify`, { key: operatorKey });
  });

  it('refuses a disabled webhook with the reference body', async () => {
    const disabled = await createWebhook({ name: 'Disabled' });
    const res = await t.request('POST', `/api/v1/webhook/${disabled.body.id}/test`, {
      key: operatorKey,
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(res.status).toBe(422);
    expect(res.text).toBe(DISABLED_BODY);
    await t.request('DELETE', `/api/v1/user/webhook/${disabled.body.id}`, { key: operatorKey });
  });

  it.each(NOTIFICATION_TYPES.map((type) => [type]))('sends a signed %s sample', async (type) => {
    const before = good.requests.length;
    const res = await t.request('POST', `/api/v1/webhook/${hookId}/test`, {
      key: operatorKey,
      body: { alert_type: type },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 200, response: { received: true } });
    const call = good.requests[before];
    expect(call?.method).toBe('POST');
    expect(call?.headers['content-type']).toBe('application/json');
    expect(call?.headers['x-team']).toBe('ops');
    expect(call?.headers['x-service-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      verifySignature(secret, {
        body: call?.body ?? '',
        timestamp: call?.headers['x-service-timestamp'] as string,
        signature: call?.headers['x-service-signature'] as string,
      }),
    ).toEqual({ ok: true });
    const payload = JSON.parse(call?.body ?? '{}');
    expect(payload).toMatchObject({
      type,
      test: true,
      alert: null,
      organization: { id: expect.any(String) },
    });
    expect(Object.keys(payload).sort()).toEqual(
      [
        'alert',
        'condition',
        'current_state',
        'display_type',
        'id',
        'message',
        'node',
        'sequence',
        'occurred_at',
        'organization',
        'previous_state',
        'resource',
        'test',
        'type',
      ].sort(),
    );
  });

  it('gives every delivery its own id', async () => {
    const before = good.requests.length;
    await t.request('POST', `/api/v1/webhook/${hookId}/test`, {
      key: operatorKey,
      body: { alert_type: 'CERT_EXPIRY' },
    });
    await t.request('POST', `/api/v1/webhook/${hookId}/test`, {
      key: operatorKey,
      body: { alert_type: 'CERT_EXPIRY' },
    });
    const [a, b] = good.requests.slice(before);
    expect(a?.headers['x-service-delivery']).not.toBe(b?.headers['x-service-delivery']);
  });

  it("returns the endpoint's status and text body as they are", async () => {
    good.handle((_request, response) => {
      response.writeHead(503, { 'content-type': 'text/plain' });
      response.end('busy, try later');
    });
    const res = await t.request('POST', `/api/v1/webhook/${hookId}/test`, {
      key: operatorKey,
      body: { alert_type: 'NODE_UPGRADE' },
    });
    good.handle(correctEndpoint(() => secret));
    expect(res.body).toEqual({ status: 503, response: 'busy, try later' });
    const read = await t.request('GET', `/api/v1/webhook/${hookId}`, { key: operatorKey });
    expect(read.body.is_enabled).toBe(true);
  });

  it('reports a timeout as error within 5.5 s and does not count it as a failure', async () => {
    good.handle(delayed(6_000, answerJson(200, {})));
    const started = Date.now();
    const res = await t.request('POST', `/api/v1/webhook/${hookId}/test`, {
      key: operatorKey,
      body: { alert_type: 'NODE_IP_CHANGE' },
    });
    const elapsed = Date.now() - started;
    good.handle(correctEndpoint(() => secret));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: null, response: null, error: expect.stringMatching(/5 s/) });
    expect(elapsed).toBeLessThan(5_500);
    const row = await t.ctx.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', hookId)
      .executeTakeFirstOrThrow();
    expect(row.consecutive_failures).toBe(0);
    expect(row.is_enabled).toBe(1);
  });

  it('refuses an unknown alert_type with 400', async () => {
    const res = await t.request('POST', `/api/v1/webhook/${hookId}/test`, {
      key: operatorKey,
      body: { alert_type: 'NOPE' },
    });
    expect(res.status).toBe(400);
  });
});

describe('headers stored before the header rules refused them', () => {
  /** Writes the row as an older version of the service could have, past today's header rules. */
  async function storedWebhook(headers: Record<string, string>, enabled: boolean): Promise<string> {
    const now = Date.now();
    const id = newId(now);
    await t.ctx.db.transaction().execute(async (trx) => {
      await touchSubscriptions(trx, operatorId);
      await webhookRepo.insertWebhook(trx, {
        id,
        kind: 'webhook',
        user_id: operatorId,
        name: 'Stored earlier',
        url: `${good.url}/hook`,
        headers: JSON.stringify(headers),
        labels: '{}',
        secret_sealed: t.ctx.secretBox.seal('stored-secret-0123456789'),
        previous_secret_sealed: null,
        previous_secret_expires_at: null,
        is_enabled: enabled ? 1 : 0,
        disabled_reason: enabled ? null : 'unverified',
        consecutive_failures: 0,
        retry_at: null,
        last_failure_at: null,
        created_at: now,
        updated_at: now,
      });
    });
    return id;
  }

  const refused: Record<string, string>[] = [
    { 'X-A': '\u0001' },
    { 'X-A': '€' },
    { Upgrade: 'websocket' },
    { Expect: '100-continue' },
    { 'Keep-Alive': 'x' },
  ];

  it.each(refused.map((headers) => [headers]))('%j: refused at create with 400', async (headers) => {
    const res = await createWebhook({ Header: headers });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, errorCode: 'BAD_REQUEST' });
    expect(res.body.message).toMatch(/printable ASCII|set by the service/);
  });

  it.each(refused.map((headers) => [headers]))(
    '%j: verify and test answer 200 saying the headers could not be sent',
    async (headers) => {
      await deleteAll();
      const before = good.requests.length;
      const disabled = await storedWebhook(headers, false);
      const verified = await t.request('POST', `/api/v1/webhook/${disabled}/verify`, { key: operatorKey });
      expect(verified.status).toBe(200);
      expect(verified.body).toEqual({
        id: disabled,
        status: 'FAILED',
        message: expect.stringMatching(/stored headers could not be sent/),
      });

      const enabled = await storedWebhook(headers, true);
      const tested = await t.request('POST', `/api/v1/webhook/${enabled}/test`, {
        key: operatorKey,
        body: { alert_type: 'NODE_STATE_CHANGE' },
      });
      expect(tested.status).toBe(200);
      expect(tested.body).toEqual({
        status: null,
        response: null,
        error: expect.stringMatching(/stored headers could not be sent/),
      });
      expect(good.requests.length).toBe(before);
      await deleteAll();
    },
  );
});

describe('ownership, roles and delete', () => {
  it("hides another user's webhook behind 404 on every route", async () => {
    await deleteAll();
    const mine = await createWebhook({});
    const other = await t.userWithRoles(['operator']);
    const id = mine.body.id as string;
    const calls: [string, string, unknown][] = [
      ['GET', `/api/v1/webhook/${id}`, undefined],
      ['PUT', `/api/v1/webhook/${id}`, { name: 'x' }],
      ['POST', `/api/v1/webhook/${id}/verify`, undefined],
      ['POST', `/api/v1/webhook/${id}/test`, { alert_type: 'NODE_STATE_CHANGE' }],
      ['DELETE', `/api/v1/user/webhook/${id}`, undefined],
    ];
    for (const [method, url, body] of calls) {
      const res = await t.request(method, url, { key: other.key, ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${url}`).toBe(404);
    }
    expect((await t.request('GET', '/api/v2/webhook', { key: other.key })).body).toEqual([]);
    expect((await t.request('GET', `/api/v1/webhook/${id}`, { key: operatorKey })).status).toBe(200);
  });

  it('lets Read Only list but not change', async () => {
    const reader = await t.userWithRoles(['read_only']);
    expect((await t.request('GET', '/api/v2/webhook', { key: reader.key })).status).toBe(200);
    const res = await t.request('POST', '/api/v1/webhook', {
      key: reader.key,
      body: { name: 'x', url: `${good.url}/h` },
    });
    expect(res.status).toBe(403);
  });

  it('deletes an unused webhook, with and without force', async () => {
    await deleteAll();
    const a = await createWebhook({});
    const plain = await t.request('DELETE', `/api/v1/user/webhook/${a.body.id}`, { key: operatorKey });
    expect(plain.body).toEqual({ id: a.body.id, message: expect.any(String), status: 'SUCCESS' });
    const b = await createWebhook({});
    const forced = await t.request('DELETE', `/api/v1/user/webhook/${b.body.id}?force=true`, {
      key: operatorKey,
    });
    expect(forced.body).toEqual({
      id: b.body.id,
      message: expect.any(String),
      status: 'SUCCESS',
      removed_alert_ids: [],
    });
    expect((await t.request('GET', `/api/v1/webhook/${a.body.id}`, { key: operatorKey })).status).toBe(404);
    expect(
      (await t.request('DELETE', `/api/v1/user/webhook/${b.body.id}`, { key: operatorKey })).status,
    ).toBe(404);
    expect(
      (await t.request('DELETE', `/api/v1/user/webhook/x?force=maybe`, { key: operatorKey })).status,
    ).toBe(400);
  });
});
