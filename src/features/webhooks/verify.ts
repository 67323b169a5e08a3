import { releaseHeld } from '../deliveries/release.js';
import { lockWebhook } from '../deliveries/repo.js';
import type { ServiceContext } from '../../context.js';
import { conflict } from '../../http/errors.js';
import { OutboundError } from '../../net/outbound.js';
import { challengeAnswerProblem, challengeUrl, newChallenge, VERIFY_DEADLINE_MS } from './challenge.js';
import { touchSubscriptions } from '../users/repo.js';
import { enableIfUnchanged, type WebhookRow } from './repo.js';
import { signingSecrets } from './secrets.js';
import { loadOwnWebhook } from './service.js';
import { transaction } from '../../db/transaction.js';

export interface VerifyOutcome {
  id: string;
  status: 'SUCCESS' | 'FAILED';
  message: string;
}

function requireNotEnabled(webhook: WebhookRow): void {
  if (webhook.is_enabled === 1) throw conflict('The webhook is already verified and enabled.');
}

/**
 * Load, leave the database, call the endpoint through net/, then record the outcome in a new
 * statement: no network call ever runs inside a transaction.
 */
export async function verifyWebhook(ctx: ServiceContext, id: string): Promise<VerifyOutcome> {
  const webhook = await loadOwnWebhook(ctx, id);
  requireNotEnabled(webhook);
  const challenge = newChallenge();
  const at = ctx.clock.now();
  const timestamp = String(at);
  const secrets = signingSecrets(ctx.secretBox, webhook, at);
  const failed = (message: string): VerifyOutcome => ({
    id,
    status: 'FAILED',
    message: `Verification failed: ${message}`,
  });

  let problem: string | undefined;
  try {
    const response = await ctx.webhookClient.send({
      url: challengeUrl(webhook.url, challenge),
      method: 'GET',
      headers: {
        ...(JSON.parse(webhook.headers) as Record<string, string>),
        'X-Service-Timestamp': timestamp,
      },
      deadlineMs: VERIFY_DEADLINE_MS,
    });
    problem = challengeAnswerProblem(response, { ...secrets, timestamp, challenge });
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    problem = error.message;
  }
  if (problem !== undefined) return failed(problem);
  const enabled = await transaction(ctx.db, async (trx) => {
    await touchSubscriptions(trx, ctx.actor.userId);
    // Enabling waits for the producers that read the webhook disabled, so it releases what they held.
    await lockWebhook(trx, id);
    const done = await enableIfUnchanged(trx, id, webhook.updated_at, ctx.clock.now());
    // Held notifications go out once the endpoint is proven again, in the transaction that says so.
    if (done) await releaseHeld(ctx, trx, id);
    return done;
  });
  if (!enabled) {
    // Changed meanwhile: deleted (404) and enabled by another verify (409) answer as they would have
    // at the start; only a real edit is a failed verification.
    requireNotEnabled(await loadOwnWebhook(ctx, id));
    return failed('the webhook was edited while it was being verified; verify it again.');
  }
  return {
    id,
    status: 'SUCCESS',
    message: 'The endpoint answered the challenge correctly; the webhook is enabled.',
  };
}
