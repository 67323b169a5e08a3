import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRUNE_RETENTION } from '../src/features/retention/prune.js';
import { PERIODIC_KEY } from '../src/jobs/worker.js';
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
});
