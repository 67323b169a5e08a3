import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneRetentionJob } from '../src/features/retention/prune.js';
import {
  answerChallenge,
  hmacHex,
  standardSignature,
  standardWebhooksKey,
  verifyNotification,
  verifySignature,
} from '../src/receiver/index.js';
import {
  startDeliveryFixture,
  tunnels,
  webhookWithAlert,
  type DeliveryFixture,
} from './support/delivery-fixture.js';
import { expectError } from './support/error-shape.js';
import { aliveNode } from './support/fleet.js';
import type { TestApp } from './support/harness.js';
import type { ReceivedRequest } from './support/https-receiver.js';

/**
 * Rotating a webhook's secret without downtime (docs/rules/webhooks.md#secret-rotation), on both databases:
 * real requests to a real HTTPS receiver, checked by the receiver kit and by the `standardwebhooks` package
 * as a receiver holding either secret would, on a clock the test moves (nothing sleeps). The dispatcher is
 * driven by hand (runDue).
 */

const DAY_MS = 86_400_000;
let fx: DeliveryFixture;
let t: TestApp;
/** The clock every part of the service reads. */
const at = { now: Date.now() };

beforeAll(async () => {
  // A failure waits an hour: nothing is sent twice behind a test's back.
  fx = await startDeliveryFixture({
    env: { MAX_WEBHOOKS_PER_USER: '20', DELIVERY_RETRY_SCHEDULE: '1h' },
    background: false,
  });
  t = fx.t;
  t.ctx.clock = { now: () => at.now };
});
afterAll(() => fx.close());

const newWhsec = () => `whsec_${randomBytes(32).toString('base64')}`;
const headersOf = (request: ReceivedRequest) => request.headers as Record<string, string>;

/**
 * The receiver answers challenges with the secret it holds now and takes every notification: which secret
 * checks a request is judged afterwards, on the request as it arrived.
 */
function receiverHolding(secret: string) {
  fx.endpoint.secret.value = secret;
  fx.endpoint.receiver.handle((request, response) => {
    const url = new URL(request.url, 'https://receiver.test');
    const challenge = url.searchParams.get('challenge');
    const body =
      request.method === 'GET' && challenge !== null
        ? answerChallenge(fx.endpoint.secret.value, String(request.headers['x-service-timestamp']), challenge)
        : { received: true };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  });
}

/** A verified webhook with a generated-form secret and an alert on it, made at the clock's time. */
async function webhookWithSecret(name: string) {
  const secret = newWhsec();
  fx.endpoint.secret.value = secret;
  const { webhookId, alertId } = await webhookWithAlert(fx, name);
  receiverHolding(secret);
  return { webhookId, alertId, secret };
}

function rotate(webhookId: string, body: unknown = {}, key?: string | null) {
  return t.request('POST', `/api/v1/webhook/${webhookId}/rotate-secret`, {
    body,
    ...(key === undefined ? {} : { key }),
  });
}

let nodes = 0;

/**
 * One notification for the alert, made and sent now: the request its webhook got. A delivery is due on the
 * queue's clock, which is the real one: the test's clock must be ahead of it for the claim to see it due.
 */
async function deliverNow(alertId: string): Promise<ReceivedRequest> {
  expect(at.now, 'the test clock runs ahead of the real one').toBeGreaterThan(Date.now());
  nodes += 1;
  await aliveNode(t, `rotation-${nodes}`, { report: tunnels(`rt${nodes}`) });
  await t.dispatcher.runDue();
  const request = fx.endpoint.receiver.requests
    .filter((one) => one.method === 'POST')
    .filter((one) => (JSON.parse(one.body) as { alert: { id: string } | null }).alert?.id === alertId)
    .at(-1);
  expect(request, 'the notification reached the receiver').toBeDefined();
  expect((JSON.parse(request!.body) as { node: { name: string } }).node.name).toBe(`rotation-${nodes}`);
  return request!;
}

/** Whether a receiver holding `secret` takes the request: the standardwebhooks package, and the kit's two checks. */
function acceptedWith(secret: string, request: ReceivedRequest): boolean {
  const headers = headersOf(request);
  let library = true;
  try {
    new Webhook(secret).verify(request.body, headers);
  } catch {
    library = false;
  }
  const kit = verifyNotification(secret, headers, request.body).ok;
  const serviceHeaders = verifySignature(secret, {
    body: request.body,
    timestamp: headers['x-service-timestamp'],
    signature: headers['x-service-signature'],
  }).ok;
  expect(new Set([library, kit, serviceHeaders]).size, 'every check agrees').toBe(1);
  return library;
}

async function storedRow(webhookId: string) {
  return t.ctx.db.selectFrom('webhooks').selectAll().where('id', '=', webhookId).executeTakeFirstOrThrow();
}

describe('during the overlap and after it', () => {
  it('signs every request with both secrets until the old one expires, then with the new one only', async () => {
    // The old secret expires a minute ahead of the real clock: within the receivers' five-minute tolerance.
    const base = Date.now() + 60_000;
    at.now = base - DAY_MS;
    const { webhookId, alertId, secret: old } = await webhookWithSecret('Rotated');
    const rotated = await rotate(webhookId);
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.headers['content-type']).toBe('application/json');
    // The default overlap is one day, from the clock's time of the rotation.
    expect(rotated.body).toEqual({
      id: webhookId,
      name: 'Rotated',
      url: `${fx.endpoint.receiver.url}/hook`,
      is_enabled: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      previous_secret_expires_at: new Date(base).toISOString(),
    });
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(old);

    at.now = base - 1_000;
    const during = await deliverNow(alertId);
    expect(acceptedWith(old, during)).toBe(true);
    expect(acceptedWith(fresh, during)).toBe(true);
    expect(acceptedWith(newWhsec(), during)).toBe(false);
    // The exact forms: the new secret's signature first, then the old one's.
    const headers = headersOf(during);
    const timestamp = headers['x-service-timestamp']!;
    expect(Number(timestamp)).toBe(at.now);
    expect(headers['x-service-signature']).toBe(
      `v1=${hmacHex(fresh, timestamp, during.body)},${hmacHex(old, timestamp, during.body)}`,
    );
    const seconds = headers['webhook-timestamp']!;
    const standard = (secret: string) =>
      standardSignature(standardWebhooksKey(secret)!, headers['webhook-id']!, seconds, during.body);
    expect(headers['webhook-signature']).toBe(`${standard(fresh)} ${standard(old)}`);

    // At the expiry instant the old secret has stopped.
    at.now = base;
    const after = await deliverNow(alertId);
    expect(acceptedWith(fresh, after)).toBe(true);
    expect(acceptedWith(old, after)).toBe(false);
    expect(headersOf(after)['x-service-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(headersOf(after)['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);

    const statuses = await t.ctx.db
      .selectFrom('deliveries')
      .select('status')
      .where('webhook_id', '=', webhookId)
      .execute();
    expect(statuses.map((row) => row.status)).toEqual(['delivered', 'delivered']);
    await t.request('DELETE', `/api/v1/webhook/${webhookId}?force=true`);
  });

  it('signs a test the same way, and a verify takes a challenge answered with either secret', async () => {
    const base = Date.now();
    at.now = base - 60_000;
    const { webhookId, secret: old } = await webhookWithSecret('Tested');
    const rotated = await rotate(webhookId, { expire_previous_after_s: 60 });
    expect(rotated.status, rotated.text).toBe(200);
    const fresh = rotated.body.secret as string;

    const tested = await t.request('POST', `/api/v1/webhook/${webhookId}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(tested.body, tested.text).toMatchObject({ status: 200 });
    const sample = fx.endpoint.receiver.requests.filter((one) => one.method === 'POST').at(-1)!;
    expect(JSON.parse(sample.body)).toMatchObject({ test: true });
    expect(acceptedWith(old, sample)).toBe(true);
    expect(acceptedWith(fresh, sample)).toBe(true);

    // An edit disables the webhook, and keeps the overlap: a receiver still on the old secret proves it.
    const verifyHolding = async (secret: string) => {
      const edited = await t.request('PUT', `/api/v1/webhook/${webhookId}`, { body: { name: 'Tested' } });
      expect(edited.status, edited.text).toBe(200);
      receiverHolding(secret);
      const verified = await t.request('POST', `/api/v1/webhook/${webhookId}/verify`);
      expect(verified.status, verified.text).toBe(200);
      return verified.body as { status: string; message: string };
    };
    expect(await verifyHolding(old)).toMatchObject({ status: 'SUCCESS' });
    expect(await verifyHolding(fresh)).toMatchObject({ status: 'SUCCESS' });

    at.now = base;
    const afterOld = await verifyHolding(old);
    expect(afterOld.status).toBe('FAILED');
    expect(afterOld.message).toMatch(/challenge_response/);
    expect(await verifyHolding(fresh)).toMatchObject({ status: 'SUCCESS' });
    const tooLate = await t.request('POST', `/api/v1/webhook/${webhookId}/test`, {
      body: { alert_type: 'NODE_STATE_CHANGE' },
    });
    expect(tooLate.body, tooLate.text).toMatchObject({ status: 200 });
    const lastSample = fx.endpoint.receiver.requests.filter((one) => one.method === 'POST').at(-1)!;
    expect(acceptedWith(fresh, lastSample)).toBe(true);
    expect(acceptedWith(old, lastSample)).toBe(false);
    await t.request('DELETE', `/api/v1/webhook/${webhookId}?force=true`);
  });

  it('stops the old secret at once with expire_previous_after_s 0, and keeps nothing of it', async () => {
    at.now = Date.now() + 60_000;
    const { webhookId, alertId, secret: old } = await webhookWithSecret('At once');
    const rotated = await rotate(webhookId, { expire_previous_after_s: 0 });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.previous_secret_expires_at).toBeNull();
    const fresh = rotated.body.secret as string;
    const row = await storedRow(webhookId);
    expect(row.previous_secret_sealed).toBeNull();
    expect(row.previous_secret_expires_at).toBeNull();
    expect(t.ctx.secretBox.open(row.secret_sealed)).toBe(fresh);

    const request = await deliverNow(alertId);
    expect(acceptedWith(fresh, request)).toBe(true);
    expect(acceptedWith(old, request)).toBe(false);
    expect(headersOf(request)['x-service-signature']).not.toContain(',');
    await t.request('DELETE', `/api/v1/webhook/${webhookId}?force=true`);
  });

  it('keeps only the newest previous secret when rotated again during an overlap', async () => {
    at.now = Date.now() + 60_000;
    const { webhookId, alertId, secret: first } = await webhookWithSecret('Twice');
    const second = (await rotate(webhookId, { expire_previous_after_s: 3_600 })).body.secret as string;
    at.now += 1_000;
    const again = await rotate(webhookId, { expire_previous_after_s: 120 });
    expect(again.status, again.text).toBe(200);
    expect(again.body.previous_secret_expires_at).toBe(new Date(at.now + 120_000).toISOString());
    const third = again.body.secret as string;

    const request = await deliverNow(alertId);
    expect(acceptedWith(third, request)).toBe(true);
    expect(acceptedWith(second, request)).toBe(true);
    expect(acceptedWith(first, request)).toBe(false);
    expect(headersOf(request)['webhook-signature']!.split(' ')).toHaveLength(2);
    await t.request('DELETE', `/api/v1/webhook/${webhookId}?force=true`);
  });

  it('ends the overlap when an edit sets a secret of its own', async () => {
    at.now = Date.now();
    const { webhookId } = await webhookWithSecret('Edited');
    await rotate(webhookId);
    const own = newWhsec();
    const edited = await t.request('PUT', `/api/v1/webhook/${webhookId}`, { body: { secret: own } });
    expect(edited.body, edited.text).toMatchObject({ secret: own, is_enabled: false });
    const row = await storedRow(webhookId);
    expect(row.previous_secret_sealed).toBeNull();
    expect(row.previous_secret_expires_at).toBeNull();
    // A rotation leaves a disabled webhook disabled, for the reason it had.
    const rotated = await rotate(webhookId);
    expect(rotated.body, rotated.text).toMatchObject({ is_enabled: false });
    const read = await t.request('GET', `/api/v1/webhook/${webhookId}`);
    expect(read.body).toMatchObject({ is_enabled: false, disabled_reason: 'edited' });
    expect(t.ctx.secretBox.open((await storedRow(webhookId)).previous_secret_sealed!)).toBe(own);
    await t.request('DELETE', `/api/v1/webhook/${webhookId}?force=true`);
  });

  it('erases an expired previous secret in the hourly retention task, and only an expired one', async () => {
    const base = Date.now();
    at.now = base;
    const expiring = await webhookWithSecret('Expiring');
    const lasting = await webhookWithSecret('Lasting');
    await rotate(expiring.webhookId, { expire_previous_after_s: 60 });
    await rotate(lasting.webhookId, { expire_previous_after_s: 3_600 });
    at.now = base + 60_000;
    const run = { id: 'r', key: 'every', attempt: 1, maxAttempts: 1, signal: new AbortController().signal };
    await pruneRetentionJob(t.ctx).handle(null, run);
    expect(await storedRow(expiring.webhookId)).toMatchObject({
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
    });
    const kept = await storedRow(lasting.webhookId);
    expect(t.ctx.secretBox.open(kept.previous_secret_sealed!)).toBe(lasting.secret);
    expect(kept.previous_secret_expires_at).toBe(base + 3_600_000);
    for (const hook of [expiring, lasting]) {
      await t.request('DELETE', `/api/v1/webhook/${hook.webhookId}?force=true`);
    }
  });
});

describe('the secrets in answers and at rest', () => {
  it('answers the new secret once, by the rotation, and the old one never again', async () => {
    at.now = Date.now();
    const { webhookId, secret: old } = await webhookWithSecret('Quiet');
    const rotated = await rotate(webhookId);
    const fresh = rotated.body.secret as string;
    expect(rotated.text).not.toContain(old);

    const reads = [
      await t.request('GET', `/api/v1/webhook/${webhookId}`),
      await t.request('GET', '/api/v2/webhook'),
      await t.request('GET', '/api/v1/webhook'),
    ];
    for (const read of reads) {
      expect(read.status, read.text).toBe(200);
      expect(read.text).not.toContain(old);
      expect(read.text).not.toContain(fresh);
      expect(read.text).not.toContain('previous_secret');
    }
    // An edit answers the secret that signs now, as the contract has it: the new one, never the old.
    const edited = await t.request('PUT', `/api/v1/webhook/${webhookId}`, { body: { name: 'Quiet too' } });
    expect(edited.body.secret).toBe(fresh);
    expect(edited.text).not.toContain(old);

    // Sealed at rest, both of them; never in the log.
    const row = await storedRow(webhookId);
    expect(JSON.stringify(row)).not.toContain(old);
    expect(JSON.stringify(row)).not.toContain(fresh);
    expect(t.ctx.secretBox.open(row.previous_secret_sealed!)).toBe(old);
    expect(t.ctx.secretBox.open(row.secret_sealed)).toBe(fresh);
    const logs = t.logs.join('');
    expect(logs).not.toContain(old);
    expect(logs).not.toContain(fresh);
    await t.request('DELETE', `/api/v1/webhook/${webhookId}?force=true`);
  });
});

describe('bad requests change nothing', () => {
  let webhookId: string;
  beforeAll(async () => {
    at.now = Date.now();
    ({ webhookId } = await webhookWithSecret('Untouched'));
  });

  const cases: [string, unknown][] = [
    ['a negative overlap', { expire_previous_after_s: -1 }],
    ['an overlap over 30 days', { expire_previous_after_s: 30 * 86_400 + 1 }],
    ['an overlap given as a string', { expire_previous_after_s: '86400' }],
    ['an overlap that is not a whole number', { expire_previous_after_s: 1.5 }],
    ['an overlap of null', { expire_previous_after_s: null }],
    ['an unknown field', { expire_previous_after_s: 60, secret: newWhsec() }],
    ['an array', [60]],
  ];

  it.each(cases)('%s → 400', async (_name, body) => {
    const before = await storedRow(webhookId);
    const res = await rotate(webhookId, body);
    expectError(res, 400, 'BAD_REQUEST');
    expect(await storedRow(webhookId)).toEqual(before);
  });

  it('malformed JSON → 400, another content type → 415, nothing changed', async () => {
    const before = await storedRow(webhookId);
    const url = `/api/v1/webhook/${webhookId}/rotate-secret`;
    const malformed = await t.request('POST', url, {
      payload: '{"expire_previous_after_s":',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'BAD_REQUEST');
    const text = await t.request('POST', url, {
      payload: 'expire_previous_after_s=60',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(await storedRow(webhookId)).toEqual(before);
  });

  it('takes no body, or {}, as the default overlap; a JSON null is still refused', async () => {
    const url = `/api/v1/webhook/${webhookId}/rotate-secret`;
    const oneDay = new Date(at.now + DAY_MS).toISOString();
    for (const options of [{}, { headers: { 'content-type': 'application/json' } }, { body: {} }]) {
      const res = await t.request('POST', url, options);
      expect(res.status, res.text).toBe(200);
      expect(res.body.previous_secret_expires_at).toBe(oneDay);
    }
    const before = await storedRow(webhookId);
    const nullBody = await t.request('POST', url, {
      payload: 'null',
      headers: { 'content-type': 'application/json' },
    });
    expectError(nullBody, 400, 'BAD_REQUEST');
    expect(await storedRow(webhookId)).toEqual(before);
  });

  it('takes 30 days, the upper bound', async () => {
    const res = await rotate(webhookId, { expire_previous_after_s: 30 * 86_400 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.previous_secret_expires_at).toBe(new Date(at.now + 30 * DAY_MS).toISOString());
  });

  it('an unknown webhook, or another user’s, is 404; a reader is 403; nothing changed', async () => {
    const before = await storedRow(webhookId);
    expectError(await rotate('01900000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
    const operator = await t.userWithRoles(['operator']);
    expectError(await rotate(webhookId, {}, operator.key), 404, 'NOT_FOUND');
    const reader = await t.userWithRoles(['read_only']);
    expectError(await rotate(webhookId, {}, reader.key), 403, 'FORBIDDEN');
    expectError(await rotate(webhookId, {}, null), 401, 'UNAUTHORIZED');
    expect(await storedRow(webhookId)).toEqual(before);
  });
});

describe('the receiver kit', () => {
  it('takes a header with both signatures when either matches the secret it holds', () => {
    const [fresh, old, other] = [
      'new-secret-0123456789abcdef',
      'old-secret-0123456789abcdef',
      'other-secret-0123456789',
    ];
    const body = '{"id":"e"}';
    const timestamp = String(Date.now());
    const signature = `v1=${hmacHex(fresh, timestamp, body)},${hmacHex(old, timestamp, body)}`;
    const request = { body, timestamp, signature };
    expect(verifySignature(fresh, request)).toEqual({ ok: true });
    expect(verifySignature(old, request)).toEqual({ ok: true });
    expect(verifySignature(other, request)).toEqual({ ok: false, reason: 'signature mismatch' });
    expect(verifySignature(old, { ...request, body: `${body} ` })).toMatchObject({ ok: false });
    expect(verifySignature(old, { ...request, signature: signature.replace('v1=', 'v2=') })).toMatchObject({
      ok: false,
    });
  });
});
