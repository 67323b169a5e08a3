import type { AppContext } from '../../../context.js';
import type { JobHandler } from '../../../jobs/worker.js';
import { newId } from '../../../lib/ids.js';
import { scheduleHeadlessChecks } from '../expiry/jobs.js';
import { insertEvents } from '../resources-repo.js';

export const LIVENESS_SWEEP = 'fleet.liveness';
/** How often the sweep runs: a silent node is UNREACHABLE within the timeout plus this (and the poll). */
export const SWEEP_EVERY_MS = 4_000;
const BATCH = 500;

/**
 * Turns ALIVE nodes that have not reported for NODE_HEARTBEAT_TIMEOUT_S into UNREACHABLE, each with its
 * NODE_STATE_CHANGE event in the same transaction (contract §6). A NEW node is never judged. Nobody is
 * judged until a full timeout has passed since `judgingFrom` (when this worker started): after edgewatch
 * was down, reports that could not arrive are not held against the nodes. Returns how many it turned.
 */
export async function sweepSilentNodes(ctx: AppContext, judgingFrom: number): Promise<number> {
  const now = ctx.clock.now();
  const timeoutMs = ctx.config.nodeHeartbeatTimeoutS * 1_000;
  if (now - judgingFrom < timeoutMs) return 0;
  let turned = 0;
  for (;;) {
    const silent = await ctx.db
      .selectFrom('nodes')
      .select(['id', 'org_id', 'name', 'last_seen_at', 'sequence', 'max_headless_time'])
      .where('node_state', '=', 'ALIVE')
      .where('last_seen_at', '<', now - timeoutMs)
      .orderBy('last_seen_at')
      .limit(BATCH)
      .execute();
    for (const node of silent) {
      const lastSeen = node.last_seen_at ?? now;
      await ctx.db.transaction().execute(async (trx) => {
        // Only if no report arrived meanwhile: the state, the last report and the sequence are as read.
        const result = await trx
          .updateTable('nodes')
          .set({ node_state: 'UNREACHABLE', state_since: now, sequence: node.sequence + 1 })
          .where('id', '=', node.id)
          .where('node_state', '=', 'ALIVE')
          .where('last_seen_at', '=', lastSeen)
          .where('sequence', '=', node.sequence)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return;
        turned += 1;
        await scheduleHeadlessChecks(ctx.jobs, trx, node, now);
        await insertEvents(trx, [
          {
            id: newId(now),
            type: 'NODE_STATE_CHANGE',
            condition: 'UNREACHABLE',
            org_id: node.org_id,
            node_id: node.id,
            resource_kind: 'node',
            resource_id: node.id,
            resource_name: node.name,
            previous_state: 'ALIVE',
            current_state: 'UNREACHABLE',
            sequence: node.sequence + 1,
            occurred_at: lastSeen + timeoutMs,
            detected_at: now,
          },
        ]);
      });
    }
    if (silent.length < BATCH) return turned;
  }
}

/** The sweep as a periodic job: every few seconds, once per tick whatever the number of workers. */
export function livenessJob(ctx: AppContext): JobHandler<null> {
  const judgingFrom = ctx.clock.now();
  return {
    kind: LIVENESS_SWEEP,
    everyMs: SWEEP_EVERY_MS,
    async handle() {
      const turned = await sweepSilentNodes(ctx, judgingFrom);
      if (turned > 0) ctx.logger.info({ nodes: turned }, 'silent nodes are UNREACHABLE');
    },
  };
}
