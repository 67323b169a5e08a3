import type { AppContext } from '../../context.js';
import { Prepared } from '../../db/prepared.js';
import { VersionedCache } from '../../lib/versioned-cache.js';
import type { Executor } from '../../db/types.js';
import { notEndedSilences, type SilenceRow } from '../silences/repo.js';
import { allAlerts, type WatchingAlert } from './repo.js';

/**
 * What every event is matched against (the alerts, with their webhook's enabled state, and the maintenance
 * windows not yet over), kept in memory per process and read again only when its version moved. Triggers
 * move the version in the transaction of every change to those rows, from any process and by any path,
 * cascades included (migration 0026). A transaction reads the version once (a report, with its node) and
 * matches all its events against the snapshot of that version: what was committed before that read.
 */
export interface MatchingSnapshot {
  /** Alerts by type, each list in the order the database gave. */
  alertsByType: ReadonlyMap<string, readonly WatchingAlert[]>;
  /** Windows that had not ended when the snapshot was read: whether one is open is decided at each use. */
  silences: readonly SilenceRow[];
}

const SNAPSHOT = 'matching';

/** Per database: one entry, valid for the version it was read at (lib/versioned-cache.ts). */
const kept = new WeakMap<object, VersionedCache>();
const versionRead = new WeakMap<object, number>();

/** The version the transaction already read with another row (a report's node): it need not read it again. */
export function rememberMatchingVersion(trx: Executor, version: number): void {
  if (trx.isTransaction) versionRead.set(trx, version);
}

export async function matchingSnapshot(ctx: AppContext, trx: Executor): Promise<MatchingSnapshot> {
  // Outside a transaction every use reads the version: only a transaction's reads belong together.
  let version = versionRead.get(trx);
  if (version === undefined) {
    version = await readMatchingVersion(trx);
    if (trx.isTransaction) versionRead.set(trx, version);
  }
  let cache = kept.get(ctx.db);
  if (cache === undefined) {
    cache = new VersionedCache(1);
    kept.set(ctx.db, cache);
  }
  const cached = cache.get<MatchingSnapshot>(SNAPSHOT, version);
  if (cached !== undefined) return cached;
  const snapshot = await loadSnapshot(trx, ctx.clock.now());
  cache.set(SNAPSHOT, version, snapshot);
  return snapshot;
}

async function loadSnapshot(trx: Executor, now: number): Promise<MatchingSnapshot> {
  const alertsByType = new Map<string, WatchingAlert[]>();
  for (const alert of await allAlerts(trx)) {
    const list = alertsByType.get(alert.type) ?? [];
    list.push(alert);
    alertsByType.set(alert.type, list);
  }
  return { alertsByType, silences: await notEndedSilences(trx, now) };
}

async function readMatchingVersion(trx: Executor): Promise<number> {
  const [row] = await MATCHING_VERSION.execute(trx, {}, {});
  return Number(row!.version);
}

const MATCHING_VERSION = new Prepared((db: Executor) =>
  db.selectFrom('matching_version').select('version').where('id', '=', 1),
);
