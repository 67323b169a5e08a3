import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { sweepSilentNodes } from '../src/features/fleet/liveness/sweep.js';
import { HEARTBEAT_FLUSH_MS } from '../src/features/fleet/reports/heartbeats.js';
import { emailDigestJob } from '../src/features/notifications/email-storm.js';
import { Worker } from '../src/jobs/worker.js';
import { lastSeen } from './support/fleet.js';
import { startTestApp, type TestApp } from './support/harness.js';
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
    expect(digest!.text.split('\n').filter((line) => line.startsWith('- Node storm-'))).toHaveLength(50);
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
    const listed = await t.request('GET', `/api/v2/notification?alert_id=${alert.body.id}&size=1`);
    expect(listed.body.results[0]).toMatchObject({ status: 'delivered', digest_id: expect.any(String) });
  });
});
