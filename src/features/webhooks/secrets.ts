import type { SecretBox } from '../../lib/secret-box.js';
import type { WebhookRow } from './repo.js';

/** How long a rotated-out secret may keep signing beside the new one, in seconds. */
export const PREVIOUS_SECRET_OVERLAP_S = { default: 86_400, max: 30 * 86_400 };

export type SealedSecrets = Pick<
  WebhookRow,
  'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'
>;

/** The secrets a request is signed with: the current one, and the previous one while its overlap lasts. */
export interface SigningSecrets {
  secret: string;
  previousSecret?: string;
}

/**
 * The secrets that sign at `at` (docs/rules/webhooks.md#secret-rotation). The clock alone decides: an expired
 * previous secret the retention task has not cleared yet signs nothing.
 */
export function signingSecrets(box: SecretBox, row: SealedSecrets, at: number): SigningSecrets {
  const secret = box.open(row.secret_sealed);
  const { previous_secret_sealed: previous, previous_secret_expires_at: expiresAt } = row;
  if (previous === null || expiresAt === null || at >= Number(expiresAt)) return { secret };
  return { secret, previousSecret: box.open(previous) };
}
