import type { Actor } from '../../context.js';
import { setBounded } from '../../lib/bounded-map.js';

interface Entry {
  actor: Actor;
  expiresAt: number;
}

/**
 * A small in-process cache of resolved API keys, so an authenticated request costs no query.
 * Revoking a key drops it here at once; other processes (PostgreSQL scale-out) see a revocation
 * within the time-to-live at the latest.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation, so a lookup that a revocation overtook is not cached. */
  private generation = 0;

  constructor(
    private readonly ttlMs = 10_000,
    private readonly maxEntries = 10_000,
  ) {}

  get(keyHash: string, now: number): Actor | undefined {
    const entry = this.entries.get(keyHash);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return entry.actor;
  }

  /** Taken before reading the database; pass it to `set`. */
  snapshot(): number {
    return this.generation;
  }

  /**
   * Caches what a lookup read, unless an invalidation happened since its snapshot: the row it read
   * may be one that was revoked meanwhile, and caching it would let the revoked key work until expiry.
   */
  set(keyHash: string, actor: Actor, now: number, snapshot: number): void {
    if (snapshot !== this.generation) return;
    setBounded(this.entries, keyHash, { actor, expiresAt: now + this.ttlMs }, this.maxEntries);
  }

  invalidateKey(keyHash: string): void {
    this.generation += 1;
    this.entries.delete(keyHash);
  }
}
