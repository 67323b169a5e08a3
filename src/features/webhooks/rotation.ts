import type { ServiceContext } from '../../context.js';
import { transaction } from '../../db/transaction.js';
import { notFound } from '../../http/errors.js';
import { isoUtcOrNull } from '../../lib/clock.js';
import { lockWebhook } from '../deliveries/repo.js';
import { touchSubscriptions } from '../users/repo.js';
import * as repo from './repo.js';
import { generateSecret } from './service.js';

/**
 * A generated secret replaces the current one, which keeps signing beside it for `overlapS` seconds (0: not
 * at all), so receivers move to the new one at their pace. Only one previous secret is kept: rotating again
 * during an overlap drops the older one. The webhook stays enabled or disabled as it was
 * (docs/rules/webhooks.md#secret-rotation).
 */
export async function rotateSecret(ctx: ServiceContext, id: string, overlapS: number) {
  const secret = generateSecret();
  const sealed = ctx.secretBox.seal(secret);
  return transaction(ctx.db, async (trx) => {
    // Serialized with the user's edits, and locked as every change of the row's version is: a verify under
    // way then sees the change and asks for another, rather than enabling on a secret it did not check.
    await touchSubscriptions(trx, ctx.actor.userId);
    await lockWebhook(trx, id);
    const existing = await repo.findOwnWebhook(trx, id, ctx.actor.userId);
    if (existing === undefined) throw notFound('Webhook');
    const now = ctx.clock.now();
    const expiresAt = overlapS === 0 ? null : now + overlapS * 1000;
    await repo.updateWebhook(trx, id, {
      secret_sealed: sealed,
      previous_secret_sealed: expiresAt === null ? null : existing.secret_sealed,
      previous_secret_expires_at: expiresAt,
      updated_at: repo.nextVersion(existing.updated_at, now),
    });
    return {
      id,
      name: existing.name,
      url: existing.url,
      is_enabled: existing.is_enabled === 1,
      secret,
      previous_secret_expires_at: isoUtcOrNull(expiresAt),
    };
  });
}
