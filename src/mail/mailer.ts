import { transaction } from '../db/transaction.js';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Db, Executor } from '../db/types.js';
import { backoffDelay, type BackoffPolicy } from '../jobs/backoff.js';
import { PermanentJobFailure, RetryJobAt } from '../jobs/outcomes.js';
import type { JobQueue } from '../jobs/queue.js';
import type { JobHandler, JobRun } from '../jobs/worker.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import * as repo from './repo.js';

export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
}

export interface MailerOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  jobs: JobQueue;
  smtpUrl: string | undefined;
  from?: string;
}

export const SEND_EMAIL = 'email.send';

/** 5 s, 10 s, 20 s ... up to an hour between tries; 25 tries cover about a day without a server. */
export const EMAIL_BACKOFF: BackoffPolicy = { baseMs: 5_000, maxMs: 3_600_000 };
export const EMAIL_MAX_ATTEMPTS = 25;

interface SendEmailPayload {
  outboxId: string;
}

/**
 * E-mail goes through the durable queue: `enqueue` writes the message to the outbox (the record of what was
 * sent) and a send job, both in the caller's transaction; a worker sends it after the commit, outside any
 * transaction, retrying on the queue's schedule. Without SMTP_URL the message is written to the log instead
 * (so a fresh install shows its links).
 */
export class Mailer {
  private readonly transport: Transporter | undefined;

  constructor(private readonly options: MailerOptions) {
    this.transport = options.smtpUrl === undefined ? undefined : nodemailer.createTransport(options.smtpUrl);
  }

  /** Writes the e-mail to the outbox with its send job, in the caller's transaction; its outbox id. */
  async enqueue(db: Executor, email: OutgoingEmail): Promise<string> {
    const now = this.options.clock.now();
    const id = newId(now);
    await repo.insertOutbox(db, {
      id,
      recipient: email.to,
      subject: email.subject,
      body_text: email.text,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      last_error: null,
      created_at: now,
      sent_at: null,
    });
    const payload: SendEmailPayload = { outboxId: id };
    await this.options.jobs.enqueue(db, SEND_EMAIL, payload, { maxAttempts: EMAIL_MAX_ATTEMPTS, key: id });
    return id;
  }

  /** The job handler that sends one outbox message. */
  sendJob(): JobHandler<SendEmailPayload> {
    return {
      kind: SEND_EMAIL,
      concurrency: 4,
      backoff: EMAIL_BACKOFF,
      handle: (payload, run) => this.send(payload.outboxId, run),
    };
  }

  close(): void {
    this.transport?.close();
  }

  /** Sends a message unless it went already (a job runs at least once, maybe twice). */
  private async send(outboxId: string, run: JobRun): Promise<void> {
    const { db, clock, logger } = this.options;
    const row = await repo.findOutbox(db, outboxId);
    if (row === undefined || row.status === 'sent' || row.status === 'logged') return;
    if (this.transport === undefined) {
      logger.info(
        { email: { id: row.id, to: row.recipient, subject: row.subject } },
        `e-mail (no SMTP_URL configured, kept in the outbox):\n${row.body_text}`,
      );
      await this.settle(row.id, 'logged');
      return;
    }
    try {
      await this.transport.sendMail({
        from: this.options.from ?? 'edgewatch <no-reply@edgewatch.local>',
        to: row.recipient,
        subject: row.subject,
        text: row.body_text,
      });
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
      const lastTry = run.attempt >= run.maxAttempts;
      const retryAt = clock.now() + backoffDelay(run.attempt, EMAIL_BACKOFF);
      await transaction(db, async (trx) => {
        await repo.markFailed(trx, row.id, message, lastTry ? 'failed' : 'pending', retryAt);
        if (lastTry) await repo.settleNotification(trx, row.id, 'failed');
      });
      logger.warn(
        { email: { id: row.id }, err: message },
        lastTry ? 'e-mail send failed for good' : 'e-mail send failed; will retry',
      );
      // The outbox shows the next try, and the job keeps to it.
      throw lastTry ? new PermanentJobFailure(message) : new RetryJobAt(retryAt, message);
    }
    await this.settle(row.id, 'sent');
  }

  /** Marks the message done and, in the same transaction, a notification it carries as delivered. */
  private async settle(outboxId: string, status: 'sent' | 'logged'): Promise<void> {
    const { db, clock } = this.options;
    await transaction(db, async (trx) => {
      await repo.markDone(trx, outboxId, status, clock.now());
      await repo.settleNotification(trx, outboxId, 'delivered');
    });
  }
}
