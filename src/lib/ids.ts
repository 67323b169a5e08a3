import { randomFillSync } from 'node:crypto';

const POOL_IDS = 256;
const pool = Buffer.alloc(16 * POOL_IDS);
let next = POOL_IDS;

/** Random bytes come from a pool refilled 256 ids at a time: one call into the system's generator, not one per id. */
function randomId(): Buffer {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const bytes = Buffer.from(pool.subarray(next * 16, next * 16 + 16));
  next += 1;
  return bytes;
}

/** UUIDv7 (RFC 9562): time-ordered, so primary keys stay index-friendly and lists sort by creation. */
export function newId(now: number = Date.now()): string {
  const bytes = randomId();
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The first UUIDv7 of the millisecond `at`: every id made before `at` sorts below it, as text on both
 * databases, so a range on the primary key finds the rows made before a time without an index of its own.
 */
export function firstIdAt(at: number): string {
  const hex = Math.max(0, Math.trunc(at)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}
