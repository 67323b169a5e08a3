import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Db, Executor } from '../db/types.js';
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
  smtpUrl: string | undefined;
  from?: string;
}

const LEASE_MS = 60_000;
const BATCH = 20;

/** Retry delay after the n-th failed attempt: 5 s, 10 s, 20 s ... capped at one hour. */
export function mailRetryDelay(attempts: number): number {
  return Math.min(5_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

/**
 * E-mail goes through a durable outbox: `enqueue` writes in the caller's transaction, `drain` sends
 * afterwards, outside any transaction. A failed send stays pending and is retried; nothing is lost.
 * Without SMTP_URL the message is written to the log instead (so a fresh install shows its links).
 */
export class Mailer {
  private readonly transport: Transporter | undefined;
  private running: Promise<number> | undefined;
  private followUp: Promise<number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: MailerOptions) {
    this.transport = options.smtpUrl === undefined ? undefined : nodemailer.createTransport(options.smtpUrl);
  }

  async enqueue(db: Executor, email: OutgoingEmail): Promise<void> {
    const now = this.options.clock.now();
    await repo.insertOutbox(db, {
      id: newId(now),
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
  }

  /** Asks for a drain soon, without making the caller wait for the SMTP server. */
  kick(): void {
    setImmediate(() => {
      if (this.closed) return;
      this.drain().catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'e-mail drain failed'),
      );
    });
  }

  /**
   * Sends every message due at the time of the call, once. A run already under way may have listed
   * the due messages before this call's message was written, so callers arriving during a run share
   * one follow-up run after it. Returns how many messages the run handled.
   */
  async drain(): Promise<number> {
    if (this.running === undefined) {
      this.running = this.drainOnce().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.followUp ??= this.running
      .catch(() => 0)
      .then(() => {
        this.followUp = undefined;
        return this.drain();
      });
    return this.followUp;
  }

  /** Retries due messages on an interval (the serve command's worker role). */
  start(intervalMs = 5_000): void {
    this.timer ??= setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.closed = true;
    await this.followUp?.catch(() => undefined);
    await this.running?.catch(() => undefined);
    this.transport?.close();
  }

  private async drainOnce(): Promise<number> {
    const { db, clock } = this.options;
    const due = await repo.listDue(db, clock.now(), BATCH);
    let handled = 0;
    for (const row of due) {
      if (!(await repo.claim(db, row, clock.now() + LEASE_MS))) continue;
      await this.deliver(row);
      handled += 1;
    }
    return handled;
  }

  private async deliver(row: repo.OutboxRow): Promise<void> {
    const { db, clock, logger } = this.options;
    if (this.transport === undefined) {
      logger.info(
        { email: { id: row.id, to: row.recipient, subject: row.subject } },
        `e-mail (no SMTP_URL configured, kept in the outbox):\n${row.body_text}`,
      );
      await repo.markDone(db, row.id, 'logged', clock.now());
      return;
    }
    try {
      await this.transport.sendMail({
        from: this.options.from ?? 'edgewatch <no-reply@edgewatch.local>',
        to: row.recipient,
        subject: row.subject,
        text: row.body_text,
      });
      await repo.markDone(db, row.id, 'sent', clock.now());
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const retryAt = clock.now() + mailRetryDelay(row.attempts + 1);
      logger.warn({ email: { id: row.id }, err: message }, 'e-mail send failed; will retry');
      await repo.markFailed(db, row.id, message.slice(0, 500), retryAt);
    }
  }
}
