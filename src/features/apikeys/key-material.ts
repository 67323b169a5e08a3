import { randomToken, sha256Hex } from '../../lib/tokens.js';

const KEY_PREFIX = 'ew_';

export interface GeneratedKey {
  key: string;
  /** Shown in lists so a person can tell keys apart without the secret part. */
  prefix: string;
  hash: string;
}

/** 32 random bytes; keys carry enough entropy that a fast hash at rest is safe. */
export function generateApiKey(): GeneratedKey {
  const key = KEY_PREFIX + randomToken();
  return fromKey(key);
}

export function fromKey(key: string): GeneratedKey {
  return { key, prefix: key.slice(0, KEY_PREFIX.length + 8), hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}
