import type { AppContext } from '../../context.js';
import { transaction } from '../../db/transaction.js';
import type { EmailDigestsTable, Executor } from '../../db/types.js';
import type { JobHandler } from '../../jobs/worker.js';
import { newId } from '../../lib/ids.js';
import type { NotificationPayload } from './payload.js';
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

/**
 * Test seams: each runs inside the transaction, between a read and the write that depends on it, so a test
 * can run the competing step there. Production code passes none.
 */
export interface EmailStormSeams {
  /** `sendByEmail`: the minute's digest has been read as still open; the notification has not joined it. */
  beforeJoiningDigest?: () => Promise<void>;
  /** The digest job: the notifications the digest took have been read; its e-mail is not written yet. */
  beforeWritingDigest?: () => Promise<void>;
}

/**
 * The user's digest of the minute, made (with the job that sends it at the minute's end) if need be, and
 * locked: the digest job takes the same lock before it reads what the digest took. So a notification joins
 * only a digest whose e-mail is still to be written and will list it, and one that finds the e-mail written
 * goes out alone: never in neither, never in both. SQLite needs no lock, a transaction there holding the
 * only connection until it ends.
 */
async function lockedDigestOf(ctx: AppContext, trx: Executor, userId: string, windowStart: number) {
  const now = ctx.clock.now();
  const digest = await emails.lockDigestOfMinute(trx, {
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

async function emailAlone(ctx: AppContext, trx: Executor, notification: Emailed): Promise<void> {
  const owner = await emails.ownerEmail(trx, notification.user_id);
  // Its page in the console, which names the node and organization and links to them.
  const link = `${ctx.config.publicUrl}/#/notifications/${notification.id}`;
  const payload = JSON.parse(notification.payload) as NotificationPayload;
  const emailId = await ctx.mailer.enqueue(trx, notificationEmail(owner, payload, link));
  await emails.setNotificationEmail(trx, notification.id, emailId);
}

/**
 * A notification sent by e-mail, through the outbox: on its own while its owner has had fewer than
 * EMAILS_ALONE_PER_MINUTE this minute, else in the minute's digest (sent when the minute is over). Either
 * way the notification names its e-mail (and its digest), and takes the e-mail's outcome.
 */
export async function sendByEmail(
  ctx: AppContext,
  trx: Executor,
  notification: Emailed,
  seams: EmailStormSeams = {},
): Promise<void> {
  const windowStart = Math.floor(ctx.clock.now() / MINUTE_MS) * MINUTE_MS;
  // One user's e-mails are counted one transaction at a time (SQLite has one writer anyway).
  await emails.lockUserForEmail(trx, notification.user_id);
  if ((await emails.sentAloneSince(trx, notification.user_id, windowStart)) >= EMAILS_ALONE_PER_MINUTE) {
    const digest = await lockedDigestOf(ctx, trx, notification.user_id, windowStart);
    // A digest already written (a notification made at the very end of its minute) takes no more.
    if (digest.email_id === null) {
      await seams.beforeJoiningDigest?.();
      await emails.putInDigest(trx, notification.id, digest.id);
      return;
    }
  }
  await emailAlone(ctx, trx, notification);
}

async function writeDigestEmail(
  ctx: AppContext,
  trx: Executor,
  digest: EmailDigestsTable,
  taken: readonly { payload: string }[],
): Promise<void> {
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
  await emails.setDigestEmail(trx, digest.id, emailId);
}

/** At the end of a user's minute: one e-mail for every notification its digest took, which all name it. */
export function emailDigestJob(ctx: AppContext, seams: EmailStormSeams = {}): JobHandler<EmailDigestJob> {
  return {
    kind: EMAIL_DIGEST,
    concurrency: 2,
    async handle({ digestId }) {
      await transaction(ctx.db, async (trx) => {
        // Locked as `sendByEmail` locks it before a notification joins (see lockedDigestOf): every
        // notification that joined has committed, and none joins until the e-mail is written.
        const digest = await emails.lockDigest(trx, digestId);
        if (digest === undefined || digest.email_id !== null) return;
        const taken = await emails.takenByDigest(trx, digestId);
        await seams.beforeWritingDigest?.();
        await writeDigestEmail(ctx, trx, digest, taken);
      });
    },
  };
}
