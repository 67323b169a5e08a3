import { transaction } from '../../db/transaction.js';
import type { AppContext, ServiceContext } from '../../context.js';
import { isUniqueViolation } from '../../db/connect.js';
import type { Executor } from '../../db/types.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { hashPassword } from '../../lib/passwords.js';
import { newToken, sha256Hex } from '../../lib/tokens.js';
import { findRole } from '../roles/catalog.js';
import { findOrg, isInSubtree } from '../orgs/repo.js';
import { normalizeEmail, roleRefs } from './presenter.js';
import * as repo from './repo.js';

export const VERIFICATION_TTL_MS = 24 * 60 * 60 * 1000;

export interface NewUser {
  name: string;
  email: string;
  password: string;
  roles: string[];
  org_id?: string;
}

export async function createUser(ctx: ServiceContext, input: NewUser) {
  const roleIds = [...new Set(input.roles)];
  const unknown = roleIds.filter((id) => findRole(id) === undefined);
  if (unknown.length > 0) {
    throw badRequest(
      `Unknown role id: ${unknown.join(', ')}. List the roles with GET /api/v2/role.`,
      unknown.map((id) => ({ field: 'roles', message: `"${id}" is not a role id` })),
    );
  }
  const orgId = input.org_id ?? ctx.actor.orgId;
  if (!(await isInSubtree(ctx.db, ctx.actor.orgId, orgId))) throw notFound('Organization');

  const emailNormalized = normalizeEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  const now = ctx.clock.now();
  const user = {
    id: newId(now),
    org_id: orgId,
    name: input.name,
    email: input.email.trim(),
    email_normalized: emailNormalized,
    password_hash: passwordHash,
    email_verified_at: null,
    password_change_required: 1,
    created_at: now,
  };
  try {
    await transaction(ctx.db, async (trx) => {
      if ((await repo.findUserByEmail(trx, emailNormalized)) !== undefined) throw emailTaken();
      await repo.insertUser(trx, user, roleIds);
      await sendVerificationLink(ctx, trx, user, now);
    });
  } catch (error) {
    throw isUniqueViolation(error) ? emailTaken() : error;
  }
  return { id: user.id, name: user.name, roles: roleRefs(roleIds) };
}

/** Stores a new single-use link for the user and puts the e-mail carrying it in the outbox; returns the link. */
async function sendVerificationLink(
  ctx: AppContext,
  trx: Executor,
  user: { id: string; email: string; name: string },
  now: number,
): Promise<string> {
  const { token, hash } = newToken();
  await repo.insertVerificationToken(trx, {
    token_hash: hash,
    user_id: user.id,
    expires_at: now + VERIFICATION_TTL_MS,
  });
  const email = verificationEmail(ctx, user, token);
  await ctx.mailer.enqueue(trx, email);
  return email.link;
}

/**
 * A new verification link for a user who has not verified yet (the first expired or was lost); earlier
 * links keep working until they expire. For administrators, through the CLI.
 */
export async function resendVerification(
  ctx: AppContext,
  email: string,
): Promise<{ email: string; link: string }> {
  const now = ctx.clock.now();
  return transaction(ctx.db, async (trx) => {
    const user = await repo.findUserByEmail(trx, normalizeEmail(email));
    if (user === undefined) throw notFound('User');
    if (user.email_verified_at !== null) throw conflict('This e-mail address is already verified.');
    return { email: user.email, link: await sendVerificationLink(ctx, trx, user, now) };
  });
}

function emailTaken() {
  return conflict('A user with this e-mail address already exists.');
}

function verificationEmail(ctx: AppContext, user: { email: string; name: string }, token: string) {
  const link = `${ctx.config.publicUrl}/api/v1/user/verify-email?token=${token}`;
  return {
    link,
    to: user.email,
    subject: 'Verify your e-mail address for edgewatch',
    text: [
      `Hello ${user.name},`,
      '',
      'An account was created for you on edgewatch. Open this link to verify your e-mail address:',
      '',
      link,
      '',
      'The link works once and expires in 24 hours. Then log in with POST /api/v1/auth/login;',
      'at the first login you choose a new password.',
    ].join('\n'),
  };
}

export async function verifyEmail(
  ctx: AppContext,
  token: string,
): Promise<{ status: 'SUCCESS'; message: string }> {
  const tokenHash = sha256Hex(token);
  const now = ctx.clock.now();
  const invalid = badRequest(
    'This verification link is invalid or has expired. Ask an administrator for a new one ' +
      '(edgewatch user resend-verification --email <your address>).',
  );
  const record = await repo.findVerificationToken(ctx.db, tokenHash);
  if (record === undefined || record.expires_at <= now) throw invalid;
  if (record.used_at !== null)
    throw badRequest('This verification link has already been used; you can log in.');
  await transaction(ctx.db, async (trx) => {
    if (!(await repo.consumeVerificationToken(trx, tokenHash, now))) {
      throw badRequest('This verification link has already been used; you can log in.');
    }
    await repo.markEmailVerified(trx, record.user_id, now);
  });
  return { status: 'SUCCESS', message: 'Your e-mail address is verified. You can now log in.' };
}

export async function describeMe(ctx: ServiceContext) {
  const org = await findOrg(ctx.db, ctx.actor.orgId);
  if (org === undefined) throw notFound('Organization');
  return {
    id: ctx.actor.userId,
    name: ctx.actor.name,
    email: ctx.actor.email,
    username: ctx.actor.email,
    org_id: org.id,
    org: { id: org.id, name: org.name },
    organization: { id: org.id, name: org.name },
    roles: roleRefs(ctx.actor.roleIds),
  };
}
