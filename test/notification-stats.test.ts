import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationStatus } from '../src/db/types.js';
import { expectError } from './support/error-shape.js';
import { startTestApp, type TestApp } from './support/harness.js';
import { webhookNotification } from './support/notifications.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

let t: TestApp;
let other: { key: string };
let root: string;
/** An hour two days ago. */
let base: number;

const iso = (at: number) => new Date(at).toISOString();

interface Seeded {
  status: NotificationStatus;
  /** When the notification was made; its event occurred `eventBefore` earlier. */
  at: number;
  eventBefore?: number;
  /** Its delivery's attempts: [when sent, duration, status code]. */
  attempts?: [number, number, number][];
}

let seq = 0;
async function seed(userId: string, webhookId: string, rows: Seeded[]) {
  for (const row of rows) {
    seq += 1;
    const id = `n-${String(seq).padStart(4, '0')}`;
    const notification = webhookNotification({
      id,
      userId,
      orgId: root,
      webhookId,
      status: row.status,
      alertName: 'Stats',
      now: row.at,
    });
    await t.ctx.db
      .insertInto('notifications')
      .values({ ...notification, occurred_at: row.at - (row.eventBefore ?? 0) })
      .execute();
    if (row.attempts === undefined) continue;
    const delivered = row.attempts.find(([, , code]) => code < 300);
    // As the service keeps them: the last request on the row when it succeeded, the others in the log.
    const last = row.attempts.at(-1)!;
    const kept = last[2] < 300 ? last : undefined;
    const logged = kept === undefined ? row.attempts : row.attempts.slice(0, -1);
    await t.ctx.db
      .insertInto('deliveries')
      .values({
        id: `d-${id}`,
        notification_id: id,
        webhook_id: webhookId,
        status: delivered === undefined ? 'failed' : 'delivered',
        attempts: row.attempts.length,
        last_attempt_at: last[0],
        next_attempt_at: null,
        lease_until: null,
        last_status_code: last[2],
        last_error: null,
        created_at: row.at,
        delivered_at: last[0] + last[1],
        success_duration_ms: kept?.[1] ?? null,
        success_response: null,
      })
      .execute();
    if (logged.length === 0) continue;
    await t.ctx.db
      .insertInto('delivery_attempts')
      .values(
        logged.map(([at, duration, code], i) => ({
          id: `a-${id}-${i}`,
          delivery_id: `d-${id}`,
          at,
          duration_ms: duration,
          status_code: code,
          failure: code < 300 ? null : 'bad_status',
          error: null,
          response: null,
        })),
      )
      .execute();
  }
}

async function webhookOf(key?: string): Promise<{ webhookId: string; userId: string }> {
  const auth = key === undefined ? {} : { key };
  const hook = await t.request('POST', '/api/v1/webhook', {
    body: { name: 'Stats', url: 'https://hooks.example.com/stats' },
    ...auth,
  });
  expect(hook.status, hook.text).toBe(201);
  const me = await t.request('GET', '/api/v1/user/me', auth);
  return { webhookId: hook.body.id as string, userId: me.body.id as string };
}

const stats = (query: Record<string, string>, key?: string) =>
  t.request('GET', '/api/v2/notification/stats', { query, ...(key === undefined ? {} : { key }) });

beforeAll(async () => {
  t = await startTestApp();
  other = await t.userWithRoles(['operator']);
  root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
  base = Math.floor((Date.now() - 2 * DAY) / HOUR) * HOUR;
  const admin = await webhookOf();
  await seed(admin.userId, admin.webhookId, [
    // Minute 0: three delivered (latencies 1,100, 5,200 and 300 ms), one failed, one suppressed.
    { status: 'delivered', at: base + SECOND, eventBefore: SECOND, attempts: [[base + SECOND, 100, 200]] },
    {
      status: 'delivered',
      at: base + 5 * SECOND,
      attempts: [
        [base + 6 * SECOND, 50, 500],
        [base + 10 * SECOND, 200, 204],
      ],
    },
    {
      status: 'delivered',
      at: base + 20 * SECOND,
      // Replayed two hours later: the latency is still the first 2xx's.
      attempts: [
        [base + 20 * SECOND, 300, 200],
        [base + 2 * HOUR, 10, 200],
      ],
    },
    { status: 'failed', at: base + 30 * SECOND, attempts: [[base + 31 * SECOND, 10, 500]] },
    { status: 'suppressed', at: base + 40 * SECOND },
    // Minute 1: one pending, and twenty delivered 100, 200, … 2,000 ms after their events.
    { status: 'pending', at: base + MINUTE },
    ...Array.from({ length: 20 }, (_, i) => ({
      status: 'delivered' as const,
      at: base + MINUTE + (i + 1) * SECOND,
      attempts: [[base + MINUTE + (i + 1) * SECOND, (i + 1) * 100, 200]] as [number, number, number][],
    })),
    // Minute 3: one held.
    { status: 'held', at: base + 3 * MINUTE + 59 * SECOND },
  ]);
  const mine = await webhookOf(other.key);
  await seed(mine.userId, mine.webhookId, [
    { status: 'delivered', at: base + 2 * SECOND, attempts: [[base + 3 * SECOND, 99_000, 200]] },
  ]);
});
afterAll(async () => {
  await t.close();
});

const zeros = {
  pending: 0,
  delivered: 0,
  failed: 0,
  held: 0,
  expired: 0,
  suppressed: 0,
  cancelled: 0,
  grouped: 0,
};
const noLatency = { latency_count: 0, latency_p50_ms: null, latency_p95_ms: null };

describe('GET /api/v2/notification/stats against seeded notifications', () => {
  it('counts per minute by status, with the p50 and p95 of the delivery latency', async () => {
    const res = await stats({ from: iso(base), to: iso(base + 5 * MINUTE), step: '1m' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      from: iso(base),
      to: iso(base + 5 * MINUTE),
      step_seconds: 60,
      latency_capped: false,
      points: [
        {
          at: iso(base),
          ...zeros,
          delivered: 3,
          failed: 1,
          suppressed: 1,
          latency_count: 3,
          latency_p50_ms: 1_100,
          latency_p95_ms: 5_200,
        },
        {
          at: iso(base + MINUTE),
          ...zeros,
          pending: 1,
          delivered: 20,
          latency_count: 20,
          latency_p50_ms: 1_000,
          latency_p95_ms: 1_900,
        },
        { at: iso(base + 2 * MINUTE), ...zeros, ...noLatency },
        { at: iso(base + 3 * MINUTE), ...zeros, held: 1, ...noLatency },
        { at: iso(base + 4 * MINUTE), ...zeros, ...noLatency },
      ],
    });
  });

  it('takes every latency of a wider step together', async () => {
    const res = await stats({ from: iso(base), to: iso(base + 5 * MINUTE), step: '5m' });
    expect(res.body.points).toEqual([
      {
        at: iso(base),
        ...zeros,
        pending: 1,
        delivered: 23,
        failed: 1,
        held: 1,
        suppressed: 1,
        latency_count: 23,
        // 100 … 2,000 with 300, 1,100 and 5,200: the 12th and the 22nd of 23.
        latency_p50_ms: 1_100,
        latency_p95_ms: 2_000,
      },
    ]);
  });

  it("shows a user only their own notifications, never another's", async () => {
    const res = await stats({ from: iso(base), to: iso(base + MINUTE), step: '1m' }, other.key);
    expect(res.status, res.text).toBe(200);
    expect(res.body.points).toEqual([
      {
        at: iso(base),
        ...zeros,
        delivered: 1,
        latency_count: 1,
        latency_p50_ms: 100_000,
        latency_p95_ms: 100_000,
      },
    ]);
  });

  it('with scope=org, counts every user’s in the caller’s organizations, and refuses Read Only', async () => {
    const window = { from: iso(base), to: iso(base + MINUTE), step: '1m' };
    const everyone = {
      at: iso(base),
      ...zeros,
      delivered: 4,
      failed: 1,
      suppressed: 1,
      latency_count: 4,
      latency_p50_ms: 1_100,
      latency_p95_ms: 100_000,
    };
    for (const key of [undefined, other.key]) {
      const res = await stats({ ...window, scope: 'org' }, key);
      expect(res.status, res.text).toBe(200);
      expect(res.body.points).toEqual([everyone]);
    }
    const east = (await t.request('POST', '/api/v1/org', { body: { name: 'East' } })).body.id as string;
    const eastOperator = await t.userWithRoles(['operator'], east);
    const below = await stats({ ...window, scope: 'org' }, eastOperator.key);
    expect(below.body.points).toEqual([{ at: iso(base), ...zeros, ...noLatency }]);
    const reader = await t.userWithRoles(['read_only']);
    expectError(await stats({ ...window, scope: 'org' }, reader.key), 403, 'FORBIDDEN');
  });

  it('defaults to the last 24 hours', async () => {
    const res = await stats({});
    expect(res.status, res.text).toBe(200);
    expect(Date.parse(res.body.to) - Date.parse(res.body.from)).toBe(DAY);
    expect(res.body.step_seconds).toBe(60);
  });
});

describe('bad input', () => {
  const now = Date.now();
  const cases: [string, Record<string, string>, string][] = [
    ['from after to', { from: iso(now), to: iso(now - HOUR) }, 'from'],
    ['an unparseable to', { to: 'tomorrow' }, 'to'],
    ['a step of seconds', { step: '30' }, 'step'],
    ['a step that is not a duration', { step: '5 minutes' }, 'step'],
    ['too many points', { from: iso(now - 7 * DAY), step: '1m' }, 'step'],
  ];
  it.each(cases)('%s → 400 naming the field', async (_name, query, field) => {
    const res = await stats(query);
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it('refuses an unknown parameter', async () => {
    expectError(await stats({ status: 'failed' }), 400, 'BAD_REQUEST');
  });
});
