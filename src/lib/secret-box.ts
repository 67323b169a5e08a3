import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { setBounded } from './bounded-map.js';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Secrets kept opened, by their sealed text, at most (the oldest dropped first). */
const OPENED_KEPT = 1_000;

/** AES-256-GCM for secrets at rest: `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
export class SecretBox {
  /**
   * Secrets opened before, by their sealed text: a webhook's secret is opened for every delivery it gets,
   * and sealed text that changes (a new secret) is a new entry. Only an authenticated opening is kept.
   */
  private readonly opened = new Map<string, string>();

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  open(sealed: string): string {
    const kept = this.opened.get(sealed);
    if (kept !== undefined) return kept;
    const plaintext = this.decrypt(sealed);
    setBounded(this.opened, sealed, plaintext, OPENED_KEPT);
    return plaintext;
  }

  private decrypt(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) {
      throw new Error('Unreadable sealed secret');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}

/**
 * SECRET_KEY when set; otherwise (SQLite only — config refuses PostgreSQL without it) a key file with
 * mode 0600 beside the database file, created on first start.
 */
export function loadSecretKey(config: Config): Buffer {
  if (config.secretKey !== undefined) return config.secretKey;
  if (config.database.kind !== 'sqlite') throw new Error('SECRET_KEY is required with PostgreSQL');
  if (config.database.file === ':memory:') return randomBytes(32);
  const file = path.join(path.dirname(config.database.file), 'secret.key');
  try {
    const existing = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    if (existing.length !== 32) throw new Error(`The key file ${file} does not hold a 32-byte key`);
    return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // 'wx' fails if another process created it meanwhile; then read theirs.
  try {
    fs.writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  }
}
