import type { AppContext } from '../../context.js';
import { isPostgres } from '../../db/connect.js';
import { transaction } from '../../db/transaction.js';
import type { Executor } from '../../db/types.js';
import type { JobHandler } from '../../jobs/worker.js';
import { newId } from '../../lib/ids.js';
import type { NotificationPayload } from '../../notifications/payload.js';
import * as emails from './email-repo.js';
import { digestEmail, notificationEmail } from './email.js';

/** E-mails a user gets one by one in a minute; the rest of that minute's go out in one digest. */
export const EMAILS_ALONE_PER_MINUTE = 5;
const MINUTE_MS = 60_000;
export const EMAIL_DIGEST = 'email.digest';
export interface EmailDigestJob {
  digestId: string;
}

interface Emailed {
  id: string;
  user_id: string;
  payload: string;
}

/** The digest of the user's minute, made (with the job that sends it at the minute's end) if need be. */
async function digestOf(ctx: AppContext, trx: Executor, userId: string, windowStart: number) {
  const now = ctx.clock.now();
  const digest = await emails.digestOfMinute(trx, {
    id: newId(now),
    user_id: userId,
    window_start: windowStart,
    created_at: now,
  });
  await ctx.jobs.enqueue(trx, EMAIL_DIGEST, { digestId: digest.id } satisfies EmailDigestJob, {
    key: digest.id,
    runAt: windowStart + MINUTE_MS,
  });
  return digest;
}

/**
 * A notification sent by e-mail, through the outbox: on its own while its owner has had fewer than
 * EMAILS_ALONE_PER_MINUTE this minute, else in the minute's digest (sent when the minute is over). Either
 * way the notification names its e-mail (and its digest), and takes the e-mail's outcome.
 */
export async function sendByEmail(ctx: AppContext, trx: Executor, notification: Emailed): Promise<void> {
  const now = ctx.clock.now();
  const windowStart = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  // One user's e-mails are counted one transaction at a time (SQLite has one writer anyway).
  if (isPostgres(trx)) await emails.lockUserForEmail(trx, notification.user_id);
  if ((await emails.sentAloneSince(trx, notification.user_id, windowStart)) >= EMAILS_ALONE_PER_MINUTE) {
    const digest = await digestOf(ctx, trx, notification.user_id, windowStart);
    // A digest already written (a notification made at the very end of its minute) takes no more.
    if (digest.email_id === null) {
      await emails.putInDigest(trx, notification.id, digest.id);
      return;
    }
  }
  const owner = await emails.ownerEmail(trx, notification.user_id);
  const link = `${ctx.config.publicUrl}/api/v1/notification/${notification.id}`;
  const payload = JSON.parse(notification.payload) as NotificationPayload;
  const emailId = await ctx.mailer.enqueue(trx, notificationEmail(owner, payload, link));
  await emails.setNotificationEmail(trx, notification.id, emailId);
}

/** At the end of a user's minute: one e-mail for every notification its digest took, which all name it. */
export function emailDigestJob(ctx: AppContext): JobHandler<EmailDigestJob> {
  return {
    kind: EMAIL_DIGEST,
    concurrency: 2,
    async handle({ digestId }) {
      await transaction(ctx.db, async (trx) => {
        const digest = await emails.findDigest(trx, digestId);
        if (digest === undefined || digest.email_id !== null) return;
        const taken = await emails.takenByDigest(trx, digestId);
        const owner = await emails.ownerEmail(trx, digest.user_id);
        const payloads = taken.map((row) => JSON.parse(row.payload) as NotificationPayload);
        const emailId = await ctx.mailer.enqueue(
          trx,
          digestEmail(owner, payloads, {
            from: digest.window_start,
            to: digest.window_start + MINUTE_MS,
            publicUrl: ctx.config.publicUrl,
          }),
        );
        await emails.setDigestEmail(trx, digestId, emailId);
      });
    },
  };
}
