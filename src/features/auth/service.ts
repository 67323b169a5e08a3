import { transaction } from '../../db/transaction.js';
import type { AppContext } from '../../context.js';
import { badRequest, forbidden, tooManyRequests, unauthorized } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { checkPassword, hashPassword } from '../../lib/passwords.js';
import { issueApiKey } from '../apikeys/service.js';
import { normalizeEmail, roleRefs } from '../users/presenter.js';
import * as users from '../users/repo.js';
import * as attempts from './repo.js';

export const LOGIN_LIMITS = {
  perAddress: { max: 60, windowMs: 60_000 },
  perAccountFailures: { max: 10, windowMs: 15 * 60_000 },
};

/** No limit looks further back than this, so older attempts are dropped. */
const KEEP_ATTEMPTS_MS = Math.max(LOGIN_LIMITS.perAddress.windowMs, LOGIN_LIMITS.perAccountFailures.windowMs);

const WRONG_CREDENTIALS = 'The e-mail address or the password is wrong.';

export interface LoginInput {
  email: string;
  password: string;
  new_password?: string;
}

/** Refuses the attempt (already recorded, so counted) when it goes over either limit. */
async function enforceLimits(ctx: AppContext, address: string, email: string, now: number): Promise<void> {
  const { perAddress, perAccountFailures } = LOGIN_LIMITS;
  const fromAddress = await attempts.requestsFromAddress(ctx.db, address, now - perAddress.windowMs);
  if (fromAddress.count > perAddress.max) {
    const retryMs = (fromAddress.oldest ?? now) + perAddress.windowMs - now;
    throw tooManyRequests(
      'Too many login requests from this address; wait before trying again.',
      retryMs / 1000,
    );
  }
  // Attempts still being checked count as failures until they succeed.
  const failures = await attempts.failuresForAccount(ctx.db, email, now - perAccountFailures.windowMs);
  if (failures.count > perAccountFailures.max) {
    const retryMs = (failures.oldest ?? now) + perAccountFailures.windowMs - now;
    throw tooManyRequests(
      'Too many failed logins for this account; wait before trying again.',
      retryMs / 1000,
    );
  }
}

/**
 * Records the attempt as a failure, then checks the limits; a refused attempt is removed again.
 * Every attempt also drops those too old to count, so failures alone cannot grow the table for ever.
 */
async function admitAttempt(ctx: AppContext, address: string, email: string, now: number): Promise<string> {
  const id = newId(now);
  await attempts.recordAttempt(ctx.db, { id, address, email_normalized: email, succeeded: 0, at: now });
  await attempts.pruneAttempts(ctx.db, now - KEEP_ATTEMPTS_MS);
  try {
    await enforceLimits(ctx, address, email, now);
  } catch (error) {
    await attempts.deleteAttempt(ctx.db, id);
    throw error;
  }
  return id;
}

/**
 * Checks, in the contract's order: credentials (401, same work for unknown e-mail and wrong password),
 * then a verified e-mail (403), then the first-login password change (403). Success issues a new key.
 */
export async function login(ctx: AppContext, input: LoginInput, address: string) {
  const now = ctx.clock.now();
  const email = normalizeEmail(input.email);
  const attemptId = await admitAttempt(ctx, address, email, now);
  const user = await users.findUserByEmail(ctx.db, email);
  const valid = await checkPassword(user?.password_hash, input.password);
  if (valid) await attempts.markSucceeded(ctx.db, attemptId);
  if (!valid || user === undefined || user.password_hash === null) {
    throw unauthorized(WRONG_CREDENTIALS);
  }
  const checkedHash = user.password_hash;
  if (user.email_verified_at === null) {
    throw forbidden(
      'The e-mail address is not verified yet: open the link in the verification e-mail first.',
    );
  }
  const newPassword = input.new_password;
  if (user.password_change_required === 1 && newPassword === undefined) {
    throw forbidden(
      'A password change is required at first login: send new_password (at least 8 characters).',
    );
  }
  if (newPassword !== undefined && newPassword === input.password) {
    throw badRequest('new_password must differ from the current password.', [
      { field: 'new_password', message: 'must differ from the current password' },
    ]);
  }
  const newHash = newPassword === undefined ? undefined : await hashPassword(newPassword);
  const roleIds = await users.roleIdsOf(ctx.db, user.id);
  const issued = await transaction(ctx.db, async (trx) => {
    // A simultaneous change came first: the password checked above is no longer the account's, so this
    // request must neither overwrite that change nor get a key.
    if (newHash !== undefined && !(await users.replacePassword(trx, user.id, checkedHash, newHash))) {
      throw unauthorized(WRONG_CREDENTIALS);
    }
    return issueApiKey(trx, ctx.clock.now(), user.id, 'Login');
  });
  return { api_key: issued.key, user: { id: user.id, name: user.name, roles: roleRefs(roleIds) } };
}
