import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireAllHeld, MAX_HELD } from '../src/features/deliveries/release.js';
import { PRUNE_RETENTION } from '../src/features/retention/prune.js';
import { PERIODIC_KEY } from '../src/jobs/worker.js';
import { newId } from '../src/lib/ids.js';
import { startTestApp, type TestApp } from './support/harness.js';

const DAY = 86_400_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { EVENT_RETENTION_DAYS: '7' } });
});
afterAll(async () => {
  await t.close();
});

function outbox(id: string, status: 'pending' | 'sent' | 'logged' | 'failed', ageDays: number) {
  const at = Date.now() - ageDays * DAY;
  return {
    id,
    recipient: 'someone@example.com',
    subject: 'subject',
    body_text: 'text',
    status,
    attempts: 1,
    next_attempt_at: at,
    last_error: null,
    created_at: at,
    sent_at: status === 'pending' ? null : at,
  };
}

function deadJob(id: string, ageDays: number) {
  return {
    id,
    kind: 'example.kind',
    payload: 'null',
    key: null,
    state: 'dead' as const,
    run_at: 0,
    attempts: 3,
    max_attempts: 3,
    locked_by: null,
    last_error: 'boom',
    created_at: Date.now() - ageDays * DAY,
  };
}

describe('the hourly retention task', () => {
  it('prunes finished e-mails and dead jobs older than EVENT_RETENTION_DAYS, and keeps the rest', async () => {
    await t.ctx.db
      .insertInto('email_outbox')
      .values([
        outbox('old-sent', 'sent', 8),
        outbox('old-logged', 'logged', 8),
        outbox('old-failed', 'failed', 8),
        outbox('old-pending', 'pending', 8),
        outbox('new-sent', 'sent', 6),
      ])
      .execute();
    await t.ctx.db
      .insertInto('jobs')
      .values([deadJob('old-dead', 8), deadJob('new-dead', 6)])
      .execute();

    // The task is one job, run once at start and then due at the next hour; bring that tick forward.
    await t.jobsSettled();
    const due = await t.ctx.jobs.reschedule(t.ctx.db, PRUNE_RETENTION, PERIODIC_KEY, Date.now());
    expect(due).toBe(true);
    await t.jobsSettled();

    const outboxIds = (await t.ctx.db.selectFrom('email_outbox').select('id').execute()).map((row) => row.id);
    expect(outboxIds.sort()).toEqual(['new-sent', 'old-pending']);
    const dead = await t.ctx.db.selectFrom('jobs').select('id').where('state', '=', 'dead').execute();
    expect(dead.map((row) => row.id)).toEqual(['new-dead']);
    const task = await t.ctx.db
      .selectFrom('jobs')
      .select(['run_at', 'attempts'])
      .where('kind', '=', PRUNE_RETENTION)
      .executeTakeFirstOrThrow();
    expect(task.run_at % 3_600_000).toBe(0);
    expect(task.run_at).toBeGreaterThan(Date.now());
    expect(task.attempts).toBe(0);
  });

  it('prunes fleet events detected before EVENT_RETENTION_DAYS, and keeps one detected since', async () => {
    const now = Date.now();
    const event = (detectedAt: number, occurredAt = detectedAt) => ({
      id: newId(detectedAt),
      type: 'NODE_STATE_CHANGE',
      condition: 'UNREACHABLE',
      org_id: 'org',
      node_id: 'node-retention',
      resource_kind: 'node',
      resource_id: 'node-retention',
      resource_name: 'node-retention',
      previous_state: 'ALIVE',
      current_state: 'UNREACHABLE',
      sequence: 1,
      occurred_at: occurredAt,
      detected_at: detectedAt,
    });
    const old = event(now - 8 * DAY);
    const recent = event(now - 6 * DAY);
    // It happened before the horizon but was only seen after it: kept until its detection is as old.
    const seenLate = event(now - 6 * DAY, now - 8 * DAY);
    await t.ctx.db.insertInto('fleet_events').values([old, recent, seenLate]).execute();

    await t.jobsSettled();
    await t.ctx.jobs.reschedule(t.ctx.db, PRUNE_RETENTION, PERIODIC_KEY, Date.now());
    await t.jobsSettled();

    const left = await t.ctx.db
      .selectFrom('fleet_events')
      .select('id')
      .where('node_id', '=', 'node-retention')
      .orderBy('id')
      .execute();
    expect(left.map((row) => row.id)).toEqual([recent.id, seenLate.id].sort());
  });
});

describe('notifications past retention, and held ones past their limits', () => {
  async function webhookAndUser() {
    const hook = await t.request('POST', '/api/v1/webhook', {
      body: { name: 'Held', url: 'https://hooks.example.com/hook' },
    });
    const me = await t.request('GET', '/api/v1/user/me');
    return { webhookId: hook.body.id as string, userId: me.body.id as string };
  }

  function notification(id: string, userId: string, webhookId: string, createdAt: number, status = 'held') {
    return {
      id,
      user_id: userId,
      alert_id: 'alert-gone',
      alert_name: 'Gone',
      event_id: `event-${id}`,
      type: 'NODE_STATE_CHANGE',
      condition: 'UNREACHABLE',
      org_id: 'org',
      node_id: 'node',
      channel_type: 'webhook' as const,
      webhook_id: webhookId,
      email_id: null,
      status: status as 'held',
      reason: null,
      payload: '{}',
      occurred_at: createdAt,
      created_at: createdAt,
    };
  }

  function delivery(id: string, webhookId: string, createdAt: number) {
    return {
      id: `d-${id}`,
      notification_id: id,
      webhook_id: webhookId,
      status: 'held' as const,
      attempts: 0,
      last_attempt_at: null,
      next_attempt_at: null,
      last_status_code: null,
      last_error: null,
      created_at: createdAt,
      delivered_at: null,
    };
  }

  it('prunes notifications older than EVENT_RETENTION_DAYS with their deliveries', async () => {
    const { webhookId, userId } = await webhookAndUser();
    const now = Date.now();
    // A notification's id is made at its created_at: the task finds the old ones by it.
    const [oldId, newerId] = [newId(now - 8 * DAY), newId(now - 6 * DAY)];
    await t.ctx.db
      .insertInto('notifications')
      .values([
        notification(oldId, userId, webhookId, now - 8 * DAY, 'delivered'),
        notification(newerId, userId, webhookId, now - 6 * DAY, 'delivered'),
      ])
      .execute();
    await t.jobsSettled();
    await t.ctx.jobs.reschedule(t.ctx.db, PRUNE_RETENTION, PERIODIC_KEY, Date.now());
    await t.jobsSettled();
    const left = await t.ctx.db
      .selectFrom('notifications')
      .select('id')
      .where('id', 'in', [oldId, newerId])
      .execute();
    expect(left.map((row) => row.id)).toEqual([newerId]);
  });

  it('expires held notifications older than 7 days, and beyond the newest 1,000 of a webhook', async () => {
    const { webhookId, userId } = await webhookAndUser();
    const now = Date.now();
    const ids = Array.from({ length: MAX_HELD + 2 }, (_, i) => `h-${String(i).padStart(5, '0')}`);
    const rows = ids.map((id, i) => notification(id, userId, webhookId, now - DAY + i));
    rows[0] = notification(ids[0]!, userId, webhookId, now - 8 * DAY);
    for (let start = 0; start < rows.length; start += 200) {
      await t.ctx.db
        .insertInto('notifications')
        .values(rows.slice(start, start + 200))
        .execute();
      await t.ctx.db
        .insertInto('deliveries')
        .values(rows.slice(start, start + 200).map((row) => delivery(row.id, webhookId, row.created_at)))
        .execute();
    }
    await expireAllHeld(t.ctx.db, now);
    const expired = await t.ctx.db
      .selectFrom('notifications')
      .select('id')
      .where('webhook_id', '=', webhookId)
      .where('status', '=', 'expired')
      .orderBy('id')
      .execute();
    // The week-old one, and the oldest beyond the newest 1,000.
    expect(expired.map((row) => row.id)).toEqual([ids[0], ids[1]]);
    const held = await t.ctx.db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('webhook_id', '=', webhookId)
      .where('status', '=', 'held')
      .executeTakeFirstOrThrow();
    expect(Number(held.n)).toBe(MAX_HELD);
  });
});
