import type { Actor } from '../../context.js';
import { setBounded } from '../../lib/bounded-map.js';

interface Entry {
  actor: Actor;
  expiresAt: number;
}

/**
 * A small in-process cache of resolved API keys, so an authenticated request costs no query
 * (decision 0002). Every revocation and every change of a user's roles drops its entries here at once, and
 * on PostgreSQL in every other process too (revocations.ts). While a process cannot hear those (its
 * listener is down), it caches nothing.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation, so a lookup that a revocation overtook is not cached. */
  private generation = 0;
  private suspended = false;

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
    if (this.suspended || snapshot !== this.generation) return;
    setBounded(this.entries, keyHash, { actor, expiresAt: now + this.ttlMs }, this.maxEntries);
  }

  invalidateKey(keyHash: string): void {
    this.generation += 1;
    this.entries.delete(keyHash);
  }

  /** Every key of the user: removed, or its roles changed. */
  invalidateUser(userId: string): void {
    this.generation += 1;
    for (const [keyHash, entry] of this.entries) {
      if (entry.actor.userId === userId) this.entries.delete(keyHash);
    }
  }

  /** Revocations may go unheard from now on: forget everything and cache nothing until `resume`. */
  suspend(): void {
    this.suspended = true;
    this.generation += 1;
    this.entries.clear();
  }

  resume(): void {
    this.suspended = false;
  }
}
