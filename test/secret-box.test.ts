import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { loadSecretKey, SecretBox } from '../src/lib/secret-box.js';

describe('secret box', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));

  it('round-trips and never repeats a ciphertext', () => {
    const a = box.seal('webhook-secret-value');
    const b = box.seal('webhook-secret-value');
    expect(a).not.toBe(b);
    expect(a).not.toContain('webhook-secret-value');
    expect(box.open(a)).toBe('webhook-secret-value');
  });

  it('refuses a tampered ciphertext or another key', () => {
    const sealed = box.seal('value');
    // Opened once first: what was opened before vouches for nothing else.
    expect(box.open(sealed)).toBe('value');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('other').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed)).toThrow();
  });
});

describe('secret key source', () => {
  it('creates a 0600 key file beside the SQLite database once, then reuses it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgewatch-key-'));
    try {
      const config = loadConfig({ DATABASE_URL: `sqlite:${path.join(dir, 'edgewatch.db')}` });
      const first = loadSecretKey(config);
      const file = path.join(dir, 'secret.key');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(loadSecretKey(config).equals(first)).toBe(true);
      expect(first.length).toBe(32);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uses SECRET_KEY when it is set', () => {
    const key = Buffer.alloc(32, 3);
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', SECRET_KEY: key.toString('base64') });
    expect(loadSecretKey(config).equals(key)).toBe(true);
  });
});
