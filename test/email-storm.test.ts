import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { transaction } from '../src/db/transaction.js';
import type { NotificationsTable } from '../src/db/types.js';
import { sweepSilentNodes } from '../src/features/fleet/liveness/sweep.js';
import { HEARTBEAT_FLUSH_MS } from '../src/features/fleet/reports/heartbeats.js';
import {
  EMAILS_ALONE_PER_MINUTE,
  emailDigestJob,
  sendByEmail,
  type EmailStormSeams,
} from '../src/features/notifications/email-storm.js';
import { insertNotification } from '../src/features/notifications/repo.js';
import { Worker } from '../src/jobs/worker.js';
import { newId } from '../src/lib/ids.js';
import { notificationPayload } from '../src/features/notifications/payload.js';
import { lastSeen, until } from './support/fleet.js';
import { dialect, startTestApp, type TestApp } from './support/harness.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';

// A storm: 200 nodes go UNREACHABLE at once, each one an e-mail notification for the same user. Five go out
// on their own, the other 195 in one digest at the end of the minute; every notification names its e-mail.
let t: TestApp;
let smtp: SmtpSink;
const NODES = 200;

beforeAll(async () => {
  smtp = await startSmtpSink();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

describe('e-mail storm control', () => {
  it('sends 200 notifications of one minute as 5 e-mails and one digest, accounting for each', async () => {
    const root = (await t.request('GET', '/api/v1/user/me')).body.org_id as string;
    const alert = await t.request('POST', '/api/v1/mysubscriptions', {
      body: {
        name: 'Anything down',
        type: 'NODE_STATE_CHANGE',
        settings: { org_id: root, alert_me: 'UNREACHABLE' },
      },
    });
    expect(alert.status, alert.text).toBe(201);
    const ids: string[] = [];
    for (let k = 0; k < NODES; k += 1) {
      const created = await t.request('POST', '/api/v1/node', { body: { name: `storm-${k}` } });
      const token = created.body.token as string;
      await t.request('POST', '/api/v1/agent/report', { key: null, headers: { 'x-node-token': token } });
      ids.push(created.body.id as string);
    }
    await t.jobsSettled();
    const before = smtp.messages.length;

    // One sweep finds them all silent: 200 notifications in the same minute.
    const latest = Math.max(...(await Promise.all(ids.map((id) => lastSeen(t, id)))));
    const judged = latest + t.config.nodeHeartbeatTimeoutS * 1_000 + HEARTBEAT_FLUSH_MS + 1;
    expect(await sweepSilentNodes({ ...t.ctx, clock: { now: () => judged } }, 0)).toBe(NODES);
    await t.jobsSettled();
    expect(smtp.messages.length - before).toBe(5);

    // The minute is over: its digest goes out.
    const ctx: AppContext = { ...t.ctx, clock: { now: () => judged + 61_000 } };
    const worker = new Worker({
      db: t.ctx.db,
      queue: t.ctx.jobs,
      clock: ctx.clock,
      logger: t.ctx.logger,
      handlers: [emailDigestJob(ctx)],
      pollMs: 60_000,
      leaseMs: 60_000,
    });
    expect(await worker.runDue()).toBe(1);
    await t.jobsSettled();
    const storm = smtp.messages.slice(before);
    expect(storm).toHaveLength(6);
    const digest = storm.find((mail) => mail.subject.startsWith('195 more notifications'));
    expect(digest, storm.map((mail) => mail.subject).join('\n')).toBeDefined();
    expect(digest!.text).toContain('195  Node state change: UNREACHABLE');
    const lines = digest!.text.split('\n').filter((line) => line.startsWith('- Node storm-'));
    expect(lines).toHaveLength(50);
    // Each names its node (in the sentence) and its organization.
    expect(lines[0]).toMatch(
      /^- Node storm-\d+ is UNREACHABLE \(was ALIVE\)\. \(Root organization, .+ UTC\)/,
    );
    expect(digest!.text).toContain('… and 145 more.');
    expect(digest!.text).toMatch(/All of them: http:\/\/\S+\/api\/v2\/notification\?start_date=/);

    // Every notification is accounted for: delivered, by its own e-mail or the digest, which it names.
    const rows = await t.ctx.db
      .selectFrom('notifications')
      .select(['status', 'email_id', 'digest_id'])
      .where('alert_id', '=', alert.body.id as string)
      .execute();
    expect(rows).toHaveLength(NODES);
    expect(rows.every((row) => row.status === 'delivered' && row.email_id !== null)).toBe(true);
    expect(rows.filter((row) => row.digest_id !== null)).toHaveLength(195);
    expect(new Set(rows.filter((row) => row.digest_id !== null).map((row) => row.email_id)).size).toBe(1);
    // The list shows it too (made in one millisecond, the 200 come in no particular order).
    const listed = await t.request('GET', `/api/v2/notification?alert_id=${alert.body.id}&size=100`);
    const inDigest = (listed.body.results as { status: string; digest_id: string | null }[]).filter(
      (row) => row.digest_id !== null,
    );
    expect(inDigest.length).toBeGreaterThanOrEqual(95);
    expect(inDigest.every((row) => row.status === 'delivered')).toBe(true);
  });
});

// The digest job and a notification of the same minute at the same moment: each notification must go out
// exactly once, alone or listed in the digest. One step is parked between its read and its write while the
// other runs; on PostgreSQL both take the digest's row lock, so the other waits for the parked one.
describe('a digest and a notification of its minute at the same moment', () => {
  const MINUTE_MS = 60_000;
  // Minutes far ahead of the real clock, one per test, so the in-process worker never finds a digest due.
  let minute = Date.UTC(2100, 0, 1);

  interface Storm {
    ctx: AppContext;
    userId: string;
    email: string;
    org: { id: string; name: string };
    nodeNames: Map<string, string>;
  }

  async function stormOfNewMinute(): Promise<Storm> {
    minute += 10 * MINUTE_MS;
    const at = minute + 30_000;
    const user = await t.userWithRoles(['operator']);
    const me = (await t.request('GET', '/api/v1/user/me', { key: user.key })).body;
    const org = (await t.request('GET', `/api/v1/org/${me.org_id}`)).body;
    return {
      ctx: { ...t.ctx, clock: { now: () => at } },
      userId: user.id,
      email: user.email,
      org: { id: org.id as string, name: org.name as string },
      nodeNames: new Map(),
    };
  }

  /** A notification of the storm's user, stored and sent by e-mail in one transaction, as an event does. */
  function notify(storm: Storm, seams: EmailStormSeams = {}): { id: string; done: Promise<void> } {
    const now = storm.ctx.clock.now();
    const id = newId(now);
    const nodeName = `race-${randomBytes(4).toString('hex')}`;
    storm.nodeNames.set(id, nodeName);
    const alert = { id: newId(now), name: 'Anything down' };
    const payload = notificationPayload(
      {
        id: newId(now),
        type: 'NODE_STATE_CHANGE',
        condition: 'UNREACHABLE',
        sequence: 2,
        occurredAt: now,
        organization: storm.org,
        node: { id: newId(now), name: nodeName },
        resource: { kind: 'node', id: newId(now), name: nodeName },
        previous: 'ALIVE',
        current: 'UNREACHABLE',
      },
      alert,
    );
    const row: NotificationsTable = {
      id,
      user_id: storm.userId,
      alert_id: alert.id,
      alert_name: alert.name,
      event_id: payload.id,
      type: payload.type,
      condition: payload.condition,
      org_id: storm.org.id,
      node_id: payload.node.id,
      channel_type: 'email',
      webhook_id: null,
      email_id: null,
      status: 'pending',
      reason: null,
      silence_id: null,
      digest_id: null,
      payload: JSON.stringify(payload),
      occurred_at: now,
      created_at: now,
    };
    const done = transaction(t.ctx.db, async (trx) => {
      await insertNotification(trx, row);
      await sendByEmail(storm.ctx, trx, row, seams);
    });
    return { id, done };
  }

  /** The storm's minute with its first notifications sent alone and the next one in the minute's digest. */
  async function minuteWithOpenDigest(storm: Storm): Promise<string> {
    for (let k = 0; k <= EMAILS_ALONE_PER_MINUTE; k += 1) await notify(storm).done;
    const digest = await t.ctx.db
      .selectFrom('email_digests')
      .select(['id', 'email_id'])
      .where('user_id', '=', storm.userId)
      .executeTakeFirstOrThrow();
    expect(digest.email_id).toBeNull();
    return digest.id;
  }

  function runDigestJob(storm: Storm, digestId: string, seams: EmailStormSeams = {}): Promise<unknown> {
    const atMinutesEnd = { ...storm.ctx, clock: { now: () => minute + MINUTE_MS } };
    // The handler reads nothing of its run.
    const run = {
      id: digestId,
      key: digestId,
      attempt: 1,
      readAlong: undefined,
      maxAttempts: 1,
      signal: new AbortController().signal,
    };
    return emailDigestJob(atMinutesEnd, seams).handle({ digestId }, run);
  }

  /** A seam that parks its step until released, and tells when the step has got there. */
  function barrier() {
    let arrive = () => {};
    let release = () => {};
    const reached = new Promise<void>((resolve) => (arrive = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const park = async () => {
      arrive();
      await released;
    };
    return { park, reached, release };
  }

  /**
   * Resolves once the competing step has finished, or waits for a lock (PostgreSQL): the parked step may go
   * on then, and the race has been run. On SQLite the parked transaction holds the only connection, so the
   * competing step cannot run a statement before it ends: the race cannot happen there, and the parked
   * step goes on at once.
   */
  async function competingStepHasRun(competing: Promise<unknown>): Promise<void> {
    if (dialect === 'sqlite') return;
    let finished = false;
    competing.then(
      () => (finished = true),
      () => (finished = true),
    );
    await until('the competing step to finish or wait for the parked one', async () => {
      if (finished) return true;
      const waiting = await sql<{ n: number | string }>`
        select count(*) as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like '%email_digests%'
      `.execute(t.ctx.db);
      return Number(waiting.rows[0]?.n) > 0;
    });
  }

  /** Every notification named an e-mail that lists it, and no other e-mail lists it: exactly once. */
  async function expectEachEmailedExactlyOnce(storm: Storm): Promise<void> {
    const notifications = await t.ctx.db
      .selectFrom('notifications')
      .select(['id', 'email_id'])
      .where('user_id', '=', storm.userId)
      .execute();
    const outbox = await t.ctx.db
      .selectFrom('email_outbox')
      .select(['id', 'body_text'])
      .where('recipient', '=', storm.email)
      .execute();
    expect(notifications).toHaveLength(storm.nodeNames.size);
    for (const notification of notifications) {
      const sentence = `Node ${storm.nodeNames.get(notification.id)} is UNREACHABLE`;
      const listing = outbox.filter((email) => email.body_text.includes(sentence)).map((email) => email.id);
      expect({ sentence, named: notification.email_id, listing }).toEqual({
        sentence,
        named: expect.any(String),
        listing: [notification.email_id],
      });
    }
  }

  it('sends alone a notification made while the digest is being written', async () => {
    const storm = await stormOfNewMinute();
    const digestId = await minuteWithOpenDigest(storm);
    const beforeWriting = barrier();
    const writing = runDigestJob(storm, digestId, { beforeWritingDigest: beforeWriting.park });
    await beforeWriting.reached;

    const late = notify(storm);
    await competingStepHasRun(late.done);
    beforeWriting.release();
    await Promise.all([writing, late.done]);

    await expectEachEmailedExactlyOnce(storm);
    const lateRow = await t.ctx.db
      .selectFrom('notifications')
      .select('digest_id')
      .where('id', '=', late.id)
      .executeTakeFirstOrThrow();
    expect(lateRow.digest_id).toBeNull();
  });

  it('lists in the digest a notification that was joining it when the digest job started', async () => {
    const storm = await stormOfNewMinute();
    const digestId = await minuteWithOpenDigest(storm);
    const beforeJoining = barrier();
    const late = notify(storm, { beforeJoiningDigest: beforeJoining.park });
    await beforeJoining.reached;

    const writing = runDigestJob(storm, digestId);
    await competingStepHasRun(writing);
    beforeJoining.release();
    await Promise.all([late.done, writing]);

    await expectEachEmailedExactlyOnce(storm);
    const digest = await t.ctx.db
      .selectFrom('email_digests')
      .innerJoin('email_outbox', 'email_outbox.id', 'email_digests.email_id')
      .select('email_outbox.subject')
      .where('email_digests.id', '=', digestId)
      .executeTakeFirstOrThrow();
    expect(digest.subject).toMatch(/^2 more notifications/);
  });
});
