import { createHash, randomBytes } from 'node:crypto';

const KEY_PREFIX = 'ew_';

export interface GeneratedKey {
  key: string;
  /** Shown in lists so a person can tell keys apart without the secret part. */
  prefix: string;
  hash: string;
}

/** 32 random bytes; keys carry enough entropy that a fast hash at rest is safe. */
export function generateApiKey(): GeneratedKey {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  return fromKey(key);
}

export function fromKey(key: string): GeneratedKey {
  return { key, prefix: key.slice(0, KEY_PREFIX.length + 8), hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
