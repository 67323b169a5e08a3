import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../src/jobs/worker.js';
import { Mailer } from '../src/mail/mailer.js';
import { listOutbox } from '../src/mail/repo.js';
import { ADMIN_KEY, latestVerificationToken, startTestApp, type TestApp } from './support/harness.js';
import { closedSmtpUrl, startSmtpSink, type ReceivedEmail, type SmtpSink } from './support/smtp-sink.js';

const PASSWORD = 'first-password';
const VERIFY_LINK = /http:\/\/edgewatch\.test\/api\/v1\/user\/verify-email\?token=[A-Za-z0-9_-]+/;

/** Adds a user through the API as the Admin; returns the address. */
async function addUser(t: TestApp): Promise<string> {
  const email = `mail-${randomBytes(4).toString('hex')}@example.com`;
  const res = await t.request('POST', '/api/v1/user', {
    body: { name: 'Mia Mail', email, password: PASSWORD, roles: ['operator'] },
  });
  expect(res.status, res.text).toBe(201);
  return email;
}

async function outboxRow(t: TestApp, email: string) {
  const row = (await listOutbox(t.ctx.db)).find((candidate) => candidate.recipient === email);
  if (row === undefined) throw new Error(`no outbox row for ${email}`);
  return row;
}

/** The verification link of an e-mail, as the path and query the service answers on. */
function linkIn(email: ReceivedEmail): string {
  const link = VERIFY_LINK.exec(email.text)?.[0];
  if (link === undefined) throw new Error(`no verification link in:\n${email.text}`);
  const url = new URL(link);
  return url.pathname + url.search;
}

/** What a new user does with the e-mail: follow the link, log in with a new password, use the key. */
async function actOnEmail(t: TestApp, address: string, email: ReceivedEmail) {
  const verified = await t.request('GET', linkIn(email), { key: null });
  expect(verified.status, verified.text).toBe(200);
  const newPassword = `chosen-${randomBytes(4).toString('hex')}`;
  const login = await t.request('POST', '/api/v1/auth/login', {
    key: null,
    body: { email: address, password: PASSWORD, new_password: newPassword },
  });
  expect(login.status, login.text).toBe(200);
  const me = await t.request('GET', '/api/v1/user/me', { key: login.body.api_key });
  expect(me.status).toBe(200);
  expect(me.body.email).toBe(address);
  return { key: login.body.api_key as string, newPassword, path: linkIn(email) };
}

describe('with an SMTP server', () => {
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestApp({ env: { SMTP_URL: sink.url } });
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  it('sends the verification e-mail, whose link lets the new user in', async () => {
    const address = await addUser(t);
    const email = await sink.waitFor((mail) => mail.to.includes(address));
    expect(email.subject).toBe('Verify your e-mail address for edgewatch');
    expect(email.text).toMatch(VERIFY_LINK);
    expect(email.text).toContain('Hello Mia Mail');
    await actOnEmail(t, address, email);

    const row = await outboxRow(t, address);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
    expect(row.sent_at).toEqual(expect.any(Number));
  });

  it('delivers e-mails of users added in quick succession at once, one to each', async () => {
    const first = await addUser(t);
    const second = await addUser(t);
    await sink.waitFor((mail) => mail.to.includes(first));
    await sink.waitFor((mail) => mail.to.includes(second));
    await t.jobsSettled();
    const toFirst = sink.messages.filter((mail) => mail.to.includes(first));
    expect(toFirst).toHaveLength(1);
    expect(toFirst[0]?.to).toEqual([first]);
  });

  it('keeps passwords, API keys and verification tokens out of the log', async () => {
    const address = await addUser(t);
    const email = await sink.waitFor((mail) => mail.to.includes(address));
    const { key, newPassword, path } = await actOnEmail(t, address, email);
    expect((await t.request('GET', '/api/v1/user/me', { key })).status).toBe(200);
    const token = new URL(path, 'http://x').searchParams.get('token') ?? '';
    expect(token.length).toBeGreaterThan(30);

    const logs = t.logs.join('');
    expect(logs).toContain('/api/v1/user/verify-email?token=[redacted]');
    for (const secret of [PASSWORD, newPassword, key, token, ADMIN_KEY]) expect(logs).not.toContain(secret);
  });
});

describe('when the SMTP server is down', () => {
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestApp({ env: { SMTP_URL: await closedSmtpUrl() } });
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  it('still adds the user and keeps the e-mail pending with the error', async () => {
    const address = await addUser(t);
    await t.jobsSettled();
    const row = await outboxRow(t, address);
    expect(row.status).toBe('pending');
    expect(row.attempts).toBeGreaterThanOrEqual(1);
    expect(row.last_error).toMatch(/ECONNREFUSED|connect/i);
    expect(row.next_attempt_at).toBeGreaterThan(row.created_at);
  });

  it('delivers the pending e-mail once a server answers, and marks it sent', async () => {
    const address = await addUser(t);
    await t.jobsSettled();
    const failed = await outboxRow(t, address);
    expect(failed.status).toBe('pending');

    // Another instance, a while later, with a working server, over the same database.
    const later = { now: () => Date.now() + 10 * 60_000 };
    const recovered = new Mailer({
      db: t.ctx.db,
      clock: later,
      logger: t.ctx.logger,
      jobs: t.ctx.jobs,
      smtpUrl: sink.url,
    });
    const worker = new Worker({
      db: t.ctx.db,
      queue: t.ctx.jobs,
      clock: later,
      logger: t.ctx.logger,
      handlers: [recovered.sendJob()],
      pollMs: 1_000,
      leaseMs: 30_000,
    });
    try {
      expect(await worker.runDue()).toBeGreaterThanOrEqual(1);
    } finally {
      recovered.close();
    }
    const email = await sink.waitFor((mail) => mail.to.includes(address));
    const row = await outboxRow(t, address);
    expect(row).toMatchObject({ status: 'sent', attempts: failed.attempts + 1, last_error: null });
    await actOnEmail(t, address, email);
  });
});

describe('without SMTP_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('keeps the e-mail in the outbox as logged and writes the link to the log', async () => {
    const address = await addUser(t);
    await t.jobsSettled();
    const row = await outboxRow(t, address);
    expect(row).toMatchObject({ status: 'logged', attempts: 1 });
    const token = await latestVerificationToken(t.ctx, address);
    const line = t.logs.find((entry) => entry.includes(address) && entry.includes('verify-email'));
    expect(line).toContain(`http://edgewatch.test/api/v1/user/verify-email?token=${token}`);
  });
});
