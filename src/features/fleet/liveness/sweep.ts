import type { AppContext } from '../../../context.js';
import type { JobHandler } from '../../../jobs/worker.js';
import { newId } from '../../../lib/ids.js';
import { scheduleHeadlessChecks } from '../expiry/jobs.js';
import { HEARTBEAT_FLUSH_MS } from '../reports/heartbeats.js';
import { recordEvents } from '../events/record.js';
import { transaction } from '../../../db/transaction.js';

export const LIVENESS_SWEEP = 'fleet.liveness';
/**
 * How often the sweep runs. A silent node is UNREACHABLE within the timeout, plus the heartbeat flush
 * the sweep allows for, plus this: NODE_HEARTBEAT_TIMEOUT_S + 4 s (docs/rules/alerts-and-fleet.md#liveness).
 */
export const SWEEP_EVERY_MS = 3_000;
const BATCH = 100;

/**
 * Turns ALIVE nodes that have not reported for NODE_HEARTBEAT_TIMEOUT_S into UNREACHABLE, each with its
 * NODE_STATE_CHANGE event, a batch per transaction (docs/rules/alerts-and-fleet.md#liveness). A NEW node is
 * never judged. Nobody is judged until a full timeout has passed since `judgingFrom` (when this worker
 * started): after edgewatch was down, reports that could not arrive are not held against the nodes. A report
 * may wait in an API process's heartbeat buffer for up to HEARTBEAT_FLUSH_MS, so silence is counted from that
 * much later. Returns how many nodes it turned.
 */
export async function sweepSilentNodes(ctx: AppContext, judgingFrom: number): Promise<number> {
  const now = ctx.clock.now();
  const timeoutMs = ctx.config.nodeHeartbeatTimeoutS * 1_000;
  if (now - judgingFrom < timeoutMs) return 0;
  const silentSince = now - timeoutMs - HEARTBEAT_FLUSH_MS;
  let turned = 0;
  for (;;) {
    const batch = await transaction(ctx.db, async (trx) => {
      // The state and the silence are checked again on the row itself, so a report that commits
      // meanwhile keeps its node ALIVE.
      const nodes = await trx
        .updateTable('nodes')
        .set((eb) => ({ node_state: 'UNREACHABLE', state_since: now, sequence: eb('sequence', '+', 1) }))
        .where('node_state', '=', 'ALIVE')
        .where('last_seen_at', '<', silentSince)
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('nodes')
            .select('id')
            .where('node_state', '=', 'ALIVE')
            .where('last_seen_at', '<', silentSince)
            .orderBy('last_seen_at')
            .limit(BATCH),
        )
        .returning(['id', 'org_id', 'name', 'last_seen_at', 'sequence', 'max_headless_time'])
        .execute();
      await scheduleHeadlessChecks(ctx.jobs, trx, nodes, now);
      await recordEvents(
        ctx,
        trx,
        nodes.map((node) => ({
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
          sequence: node.sequence,
          occurred_at: (node.last_seen_at ?? now - timeoutMs) + timeoutMs,
          detected_at: now,
        })),
      );
      return nodes.length;
    });
    turned += batch;
    if (batch < BATCH) return turned;
    // A batch's transaction runs on SQLite without giving the event loop back: between batches, the
    // requests and deliveries waiting (the first words of incidents the batch opened) go on.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The sweep as a periodic job: every few seconds, once per tick whatever the number of workers. */
export function livenessJob(ctx: AppContext): JobHandler<null> {
  const judgingFrom = ctx.clock.now();
  return {
    kind: LIVENESS_SWEEP,
    everyMs: SWEEP_EVERY_MS,
    async handle() {
      const started = performance.now();
      const turned = await sweepSilentNodes(ctx, judgingFrom);
      const ms = Math.round(performance.now() - started);
      if (turned > 0) ctx.logger.info({ nodes: turned, ms }, 'silent nodes are UNREACHABLE');
    },
  };
}
