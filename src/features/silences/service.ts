import type { ServiceContext } from '../../context.js';
import { transaction } from '../../db/transaction.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { listedOrg } from '../orgs/service.js';
import { forEachId } from '../../http/bulk.js';
import { mapPage, type PageRequest } from '../../http/lists.js';
import { isoUtc, isoUtcOrNull } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { isInSubtree } from '../orgs/repo.js';
import { SILENCE_END, type SilenceEnd } from './end-job.js';
import { currentOrNextOccurrence, NEVER, recurrenceOf } from './occurrences.js';
import type { Recurrence } from './recurrence.js';
import { timesOf } from './times.js';
import * as repo from './repo.js';

export interface SilenceInput {
  name: string;
  org_id: string;
  include_child?: boolean | 'true' | 'false';
  node_id?: string;
  types?: string[];
  starts_at?: string;
  ends_at?: string;
  recurrence?: Recurrence;
  until?: string;
  comment?: string;
}

function stateOf(row: repo.SilenceRow, now: number): repo.SilenceState {
  if (row.starts_at > now) return 'upcoming';
  return row.ends_at > now ? 'active' : 'ended';
}

function present(
  row: repo.SilenceRow,
  now: number,
  state: repo.SilenceState | 'cancelled' = stateOf(row, now),
) {
  const next = state === 'cancelled' ? undefined : currentOrNextOccurrence(row, now);
  return {
    id: row.id,
    name: row.name,
    org_id: row.org_id,
    include_child: row.include_child === 1,
    node_id: row.node_id,
    types: row.types === null ? null : row.types.split(','),
    starts_at: isoUtc(row.starts_at),
    ends_at: row.ends_at === NEVER ? null : isoUtc(row.ends_at),
    comment: row.comment,
    state,
    created_by: { id: row.created_by },
    created_at: isoUtc(row.created_at),
    recurrence: recurrenceOf(row) ?? null,
    until: isoUtcOrNull(row.until),
    next_occurrence: next === undefined ? null : { starts_at: isoUtc(next.start), ends_at: isoUtc(next.end) },
  };
}

async function checkNode(ctx: ServiceContext, nodeId: string, window: Window): Promise<void> {
  const node = await ctx.db.selectFrom('nodes').select('org_id').where('id', '=', nodeId).executeTakeFirst();
  if (node === undefined || !(await isInSubtree(ctx.db, ctx.actor.orgId, node.org_id)))
    throw notFound('Node');
  const inside =
    node.org_id === window.org_id ||
    (window.include_child === 1 && (await isInSubtree(ctx.db, window.org_id, node.org_id)));
  if (!inside) {
    throw badRequest('The node is outside the organizations the window covers.', [
      {
        field: 'node_id',
        message: `is not in ${window.org_id}${window.include_child === 1 ? ' or below it' : ''}`,
      },
    ]);
  }
}

/** What the windows of one request share: everything but the node and the id. */
type Window = Omit<repo.SilenceRow, 'id' | 'node_id'>;

async function windowOf(ctx: ServiceContext, input: SilenceInput): Promise<Window> {
  const now = ctx.clock.now();
  const times = timesOf(input, now);
  if (!(await isInSubtree(ctx.db, ctx.actor.orgId, input.org_id))) throw notFound('Organization');
  const includeChild =
    input.include_child === undefined || input.include_child === true || input.include_child === 'true';
  return {
    name: input.name,
    org_id: input.org_id,
    include_child: includeChild ? 1 : 0,
    types: input.types === undefined ? null : input.types.join(','),
    ...times,
    comment: input.comment ?? null,
    created_by: ctx.actor.userId,
    created_at: now,
  };
}

/** The window, on one node when given, with the job that ends it. */
async function openWindow(ctx: ServiceContext, window: Window, nodeId: string | undefined) {
  if (nodeId !== undefined) await checkNode(ctx, nodeId, window);
  const now = ctx.clock.now();
  const row: repo.SilenceRow = { ...window, id: newId(now), node_id: nodeId ?? null };
  // A recurring window's end job comes at its first occurrence's end, and moves itself to each next one.
  const first = row.recurrence === null ? undefined : currentOrNextOccurrence(row, now);
  const end: SilenceEnd = first === undefined ? { silenceId: row.id } : { silenceId: row.id, since: now };
  await transaction(ctx.db, async (trx) => {
    await repo.insertSilence(trx, row);
    await ctx.jobs.enqueue(trx, SILENCE_END, end, { key: row.id, runAt: first?.end ?? row.ends_at });
  });
  return present(row, ctx.clock.now());
}

/** A maintenance window on an organization of the caller's subtree, or on one node of it. */
export async function createSilence(ctx: ServiceContext, input: SilenceInput) {
  return openWindow(ctx, await windowOf(ctx, input), input.node_id);
}

/**
 * One window per node, alike but for the node: what is wrong with the request as a whole refuses it all
 * (400, 404 for the organization); a node that cannot have its window is refused alone, in its result.
 */
export async function createNodeSilences(
  ctx: ServiceContext,
  input: SilenceInput,
  nodeIds: readonly string[],
) {
  if (input.node_id !== undefined) {
    throw badRequest('Give node_id or node_ids, not both.', [
      { field: 'node_ids', message: 'cannot be given with node_id' },
    ]);
  }
  const window = await windowOf(ctx, input);
  return forEachId(nodeIds, 201, (nodeId) => openWindow(ctx, window, nodeId));
}

async function loadSilence(ctx: ServiceContext, id: string): Promise<repo.SilenceRow> {
  const row = await repo.findSilence(ctx.db, id);
  if (row === undefined || !(await isInSubtree(ctx.db, ctx.actor.orgId, row.org_id)))
    throw notFound('Silence');
  return row;
}

export async function getSilence(ctx: ServiceContext, id: string) {
  return present(await loadSilence(ctx, id), ctx.clock.now());
}

export async function listSilences(
  ctx: ServiceContext,
  query: { state?: repo.SilenceState; org_id?: string },
  page: PageRequest,
) {
  const now = ctx.clock.now();
  const rootOrgId = (await listedOrg(ctx, query.org_id)) ?? ctx.actor.orgId;
  const found = await repo.listSilences(
    ctx.db,
    { rootOrgId, now, ...(query.state === undefined ? {} : { state: query.state }) },
    page,
  );
  return mapPage(found, (row) => present(row, now));
}

/**
 * Ends a window early: one under way ends now (what it held back and still holds is then sent); one not
 * started yet is removed; one already over → 409.
 */
export async function endSilence(ctx: ServiceContext, id: string) {
  const row = await loadSilence(ctx, id);
  const now = ctx.clock.now();
  const state = stateOf(row, now);
  if (state === 'ended') throw conflict('The window has already ended.');
  await transaction(ctx.db, async (trx) => {
    if (state === 'upcoming') {
      await repo.deleteSilence(trx, id);
      await ctx.jobs.cancel(trx, SILENCE_END, id);
    } else {
      await repo.setSilenceEnd(trx, id, now);
      await ctx.jobs.reschedule(trx, SILENCE_END, id, now);
    }
  });
  return state === 'upcoming'
    ? present(row, now, 'cancelled')
    : present({ ...row, ends_at: now }, now, 'ended');
}
