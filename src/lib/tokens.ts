import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes, URL-safe text: the entropy of every key, secret, token and challenge we make. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Lower-hex SHA-256: how high-entropy tokens are stored (a slow hash adds nothing for them). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A single-use token for links; only its hash is stored. */
export function newToken(): { token: string; hash: string } {
  const token = randomToken();
  return { token, hash: sha256Hex(token) };
}
