import { setBounded } from './bounded-map.js';

/**
 * Values cached per key together with the version they were read at. A reader first reads the current
 * version from the database (one indexed row), so a hit is never older than the last committed change,
 * whichever process made it. Bounded: the least recently used key goes first.
 */
export class VersionedCache {
  private readonly entries = new Map<string, { version: number; value: unknown }>();

  constructor(private readonly maxEntries = 1_000) {}

  get<T>(key: string, version: number): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.version !== version) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value as T;
  }

  set(key: string, version: number, value: unknown): void {
    setBounded(this.entries, key, { version, value }, this.maxEntries);
  }
}
