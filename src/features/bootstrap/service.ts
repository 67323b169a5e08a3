import { transaction } from '../../db/transaction.js';
import type { AppContext } from '../../context.js';
import { isUniqueViolation } from '../../db/connect.js';
import { newId } from '../../lib/ids.js';
import { hashApiKey } from '../apikeys/key-material.js';
import { findKeyByHash } from '../apikeys/repo.js';
import { issueApiKey } from '../apikeys/service.js';
import { countOrgs, insertOrg } from '../orgs/repo.js';
import { normalizeEmail } from '../users/presenter.js';
import { findFirstAdmin, insertUser } from '../users/repo.js';

export interface BootstrapOptions {
  orgName?: string;
  adminName?: string;
  adminEmail?: string;
  /** The key to install instead of a random one (BOOTSTRAP_API_KEY). */
  presetKey?: string;
}

export type BootstrapResult =
  | { kind: 'created'; orgId: string; adminId: string; adminEmail: string; key: string; generated: boolean }
  | { kind: 'preset-key-added'; adminEmail: string }
  | { kind: 'unchanged' };

/**
 * First start: with no organization yet, creates the root organization, an Admin user and one admin
 * key. Later starts change nothing, except that a BOOTSTRAP_API_KEY not yet known is installed for the
 * first admin; running it twice with the same value is a no-op.
 */
export async function bootstrap(ctx: AppContext, options: BootstrapOptions = {}): Promise<BootstrapResult> {
  try {
    return await bootstrapOnce(ctx, options);
  } catch (error) {
    // Another instance bootstrapped the same database at the same moment (PostgreSQL, several
    // instances starting together); its work is committed and visible now, so the second look finds it.
    if (!isUniqueViolation(error)) throw error;
    return bootstrapOnce(ctx, options);
  }
}

async function bootstrapOnce(ctx: AppContext, options: BootstrapOptions): Promise<BootstrapResult> {
  return transaction(ctx.db, async (trx) => {
    const now = ctx.clock.now();
    if ((await countOrgs(trx)) === 0) {
      const orgId = newId(now);
      await insertOrg(trx, {
        id: orgId,
        name: options.orgName ?? 'Root organization',
        parent_id: null,
        created_at: now,
      });
      const email = options.adminEmail ?? 'admin@edgewatch.local';
      const adminId = newId(now);
      await insertUser(
        trx,
        {
          id: adminId,
          org_id: orgId,
          name: options.adminName ?? 'Administrator',
          email,
          email_normalized: normalizeEmail(email),
          password_hash: null,
          email_verified_at: now,
          password_change_required: 0,
          created_at: now,
        },
        ['admin'],
      );
      const issued = await issueApiKey(trx, now, adminId, 'Bootstrap', options.presetKey);
      return {
        kind: 'created',
        orgId,
        adminId,
        adminEmail: email,
        key: issued.key,
        generated: options.presetKey === undefined,
      };
    }
    if (options.presetKey === undefined) return { kind: 'unchanged' };
    if ((await findKeyByHash(trx, hashApiKey(options.presetKey))) !== undefined) return { kind: 'unchanged' };
    const admin = await findFirstAdmin(trx);
    if (admin === undefined) return { kind: 'unchanged' };
    await issueApiKey(trx, now, admin.id, 'Bootstrap', options.presetKey);
    return { kind: 'preset-key-added', adminEmail: admin.email };
  });
}

/** Says what bootstrap did, printing a generated key once and clearly (it is never stored in clear). */
export function announceBootstrap(ctx: AppContext, result: BootstrapResult): void {
  if (result.kind === 'created' && result.generated) {
    // One line, so it stays readable in JSON logs: the key is never stored in clear and never shown again.
    ctx.logger.warn(
      `First start: created the root organization and ${result.adminEmail}. Admin API key: ${result.key} ` +
        '(shown only this once; send it in the X-API-KEY header)',
    );
  } else if (result.kind === 'created') {
    ctx.logger.info(
      `First start: created the root organization and ${result.adminEmail} with BOOTSTRAP_API_KEY.`,
    );
  } else if (result.kind === 'preset-key-added') {
    ctx.logger.info(`Installed BOOTSTRAP_API_KEY for ${result.adminEmail}.`);
  }
}
