import { paginate } from '../../db/paginate.js';
import type { Executor, SilencesTable } from '../../db/types.js';
import type { Page, PageRequest } from '../../http/lists.js';
import { subtreeIds } from '../orgs/repo.js';

export type SilenceRow = SilencesTable;

export async function insertSilence(db: Executor, row: SilenceRow): Promise<void> {
  await db.insertInto('silences').values(row).execute();
}

export async function findSilence(db: Executor, id: string): Promise<SilenceRow | undefined> {
  return db.selectFrom('silences').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The windows open at `now` (few at any time: an index range on ends_at, then the start). */
/** The windows not over at `now` (open, or still to come): the matching snapshot's. */
export async function notEndedSilences(db: Executor, now: number): Promise<SilenceRow[]> {
  return db.selectFrom('silences').selectAll().where('ends_at', '>', now).execute();
}

export type SilenceState = 'upcoming' | 'active' | 'ended';

/** A page of the windows of an organization's subtree, latest start first. */
export async function listSilences(
  db: Executor,
  filters: { rootOrgId: string; state?: SilenceState; now: number },
  page: PageRequest,
): Promise<Page<SilenceRow>> {
  let query = db.selectFrom('silences').selectAll().where('org_id', 'in', subtreeIds(db, filters.rootOrgId));
  if (filters.state === 'upcoming') query = query.where('starts_at', '>', filters.now);
  if (filters.state === 'active') {
    query = query.where('starts_at', '<=', filters.now).where('ends_at', '>', filters.now);
  }
  if (filters.state === 'ended') query = query.where('ends_at', '<=', filters.now);
  return paginate(db, query.orderBy('starts_at', 'desc').orderBy('id', 'desc'), page);
}

export async function setSilenceEnd(db: Executor, id: string, endsAt: number): Promise<void> {
  await db.updateTable('silences').set({ ends_at: endsAt }).where('id', '=', id).execute();
}

export async function deleteSilence(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('silences').where('id', '=', id).execute();
}

/**
 * What a window held back, with the events behind it, in the order they happened per resource; made at or
 * after `since` when given (a recurring window's occurrences told before then).
 */
export async function heldBy(db: Executor, silenceId: string, since?: number) {
  const query = db
    .selectFrom('notifications')
    .innerJoin('fleet_events', 'fleet_events.id', 'notifications.event_id')
    .selectAll('notifications')
    .select([
      'fleet_events.resource_kind',
      'fleet_events.resource_id',
      'fleet_events.resource_name',
      'fleet_events.sequence',
      'fleet_events.previous_state',
      'fleet_events.current_state',
      'fleet_events.detected_at',
    ])
    .where('notifications.silence_id', '=', silenceId)
    .where('notifications.status', '=', 'suppressed')
    .orderBy('fleet_events.sequence')
    .orderBy('notifications.id');
  return (since === undefined ? query : query.where('notifications.created_at', '>=', since)).execute();
}

export type HeldNotification = Awaited<ReturnType<typeof heldBy>>[number];
