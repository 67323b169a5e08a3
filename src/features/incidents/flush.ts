import type { AppContext } from '../../context.js';
import { transaction } from '../../db/transaction.js';
import type { Executor } from '../../db/types.js';
import type { JobHandler } from '../../jobs/worker.js';
import { findAlert } from '../notifications/repo.js';
import { INCIDENT_FLUSH, scheduleFlush, type IncidentFlush } from './join.js';
import { writeMessage } from './message.js';
import { timingOf } from './policy.js';
import * as repo from './repo.js';
import { incidentColumns, incidentOf, memberOf } from './state.js';
import { flush, type Member } from './timeline.js';

/**
 * Test seams: each runs inside the flush's transaction, between a read and the write that depends on it,
 * so that a test can run the competing step there. Production code passes none.
 */
export interface FlushSeams {
  /** The incident is locked and its members read; nothing is written yet. */
  afterRead?: () => Promise<void>;
}

/** The members' rows as the flush leaves them: told ones marked, dropped ones deleted, in a few statements. */
async function writeMembers(
  trx: Executor,
  incidentId: string,
  before: readonly Member[],
  after: readonly Member[],
): Promise<void> {
  const kept = new Map(after.map((member) => [member.key, member]));
  await repo.deleteMembers(
    trx,
    incidentId,
    before.filter((member) => !kept.has(member.key)).map((member) => member.key),
  );
  // A flush changes only these three columns, and alike for many members: one statement per distinct change.
  const alike = new Map<string, { changes: Parameters<typeof repo.updateMembers>[3]; keys: string[] }>();
  for (const old of before) {
    const next = kept.get(old.key);
    if (next === undefined) continue;
    if (next.change === old.change && next.flaps === old.flaps && next.announced === old.announced) continue;
    const changes = { change: next.change, flaps: next.flaps, announced: next.announced ? 1 : 0 };
    const id = JSON.stringify(changes);
    const group = alike.get(id) ?? { changes, keys: [] };
    group.keys.push(old.key);
    alike.set(id, group);
  }
  for (const { changes, keys } of alike.values()) await repo.updateMembers(trx, incidentId, keys, changes);
}

/**
 * Flushes the incident if it is due: the message its state calls for (timeline.ts flush), its members
 * marked told, its next due time, in one transaction with no network call. The incident's row stays locked
 * until the commit, so one flush runs per incident at a time, and an event that changes it waits: a member
 * that joins is written after this read, and is in the next message.
 */
export async function flushIncident(
  ctx: AppContext,
  incidentId: string,
  seams: FlushSeams = {},
): Promise<void> {
  await transaction(ctx.db, async (trx) => {
    const row = await repo.lockIncident(trx, incidentId);
    if (row === undefined || row.status !== 'firing' || row.due_at === null) return;
    const alert = await findAlert(trx, row.alert_id);
    if (alert === undefined) return;
    const now = ctx.clock.now();
    const before = incidentOf(row);
    if (now < Number(row.due_at)) {
      // Woken early (a job moved by a change since): the due time stands.
      await scheduleFlush(ctx, trx, row.id, Number(row.due_at));
      return;
    }
    const memberRows = await repo.allMembers(trx, row.id);
    const members = memberRows.map(memberOf);
    await seams.afterRead?.();
    const step = flush(before, members, now, timingOf(alert));
    const after = { ...row, ...incidentColumns(step.incident) };
    if (step.message !== null) {
      const byKey = new Map(memberRows.map((member) => [member.member_key, member]));
      await writeMessage(ctx, trx, after, alert, step.message, byKey);
    }
    if (step.incident.status === 'firing') await writeMembers(trx, row.id, members, step.members);
    else {
      // A resolved incident keeps its members as they ended, for its page, with nothing left to tell.
      const told = members.filter((member) => member.change !== null).map((member) => member.key);
      await repo.updateMembers(trx, row.id, told, { change: null });
    }
    await repo.updateIncident(trx, row.id, incidentColumns(step.incident));
    await scheduleFlush(ctx, trx, row.id, step.incident.dueAt);
  });
}

export function incidentFlushJob(ctx: AppContext, seams: FlushSeams = {}): JobHandler<IncidentFlush> {
  return {
    kind: INCIDENT_FLUSH,
    concurrency: 4,
    async handle({ incidentId }) {
      await flushIncident(ctx, incidentId, seams);
    },
  };
}
