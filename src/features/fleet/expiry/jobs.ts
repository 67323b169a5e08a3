import type { AppContext } from '../../../context.js';
import type { Executor } from '../../../db/types.js';
import type { JobQueue } from '../../../jobs/queue.js';
import type { JobHandler } from '../../../jobs/worker.js';
import { isoUtc } from '../../../lib/clock.js';
import { newId } from '../../../lib/ids.js';
import { recordEvents } from '../events/record.js';
import { nodeHasEvent } from '../events/repo.js';
import { transaction } from '../../../db/transaction.js';

export const CERT_EXPIRY_CHECK = 'fleet.cert-expiry';
export const HEADLESS_EXPIRY_CHECK = 'fleet.headless-expiry';
const MINUTE_MS = 60_000;
const THRESHOLDS = ['80', '100'] as const;
type Threshold = (typeof THRESHOLDS)[number];

interface CertCheck {
  nodeId: string;
  notAfter: number;
  threshold: Threshold;
}

interface HeadlessCheck {
  nodeId: string;
  /** When the node became UNREACHABLE: the check holds only for that stretch of silence. */
  since: number;
  threshold: Threshold;
}

/** When `percent` of the span from `start` to `end` has passed. */
const at = (start: number, end: number, threshold: Threshold) =>
  start + Math.round(((end - start) * Number(threshold)) / 100);

/** The condition of a CERT_EXPIRY event that says a warned-of certificate was replaced by a later one. */
export const RENEWED = 'RENEWED';

/**
 * Whether a certificate that replaces `oldNotAfter` with a later `newNotAfter` renews one that was warned of
 * (an 80 % or 100 % event stored for it): then its CERT_EXPIRY `RENEWED` event is due, which closes what that
 * warning opened (a PagerDuty incident). Not an `alert_me` value: only that closing is sent it.
 */
export async function renewsWarnedCertificate(
  db: Executor,
  nodeId: string,
  oldNotAfter: number | null,
  newNotAfter: number,
): Promise<boolean> {
  if (oldNotAfter === null || newNotAfter <= oldNotAfter) return false;
  const expiry = isoUtc(oldNotAfter);
  for (const condition of THRESHOLDS)
    if (await nodeHasEvent(db, nodeId, { type: 'CERT_EXPIRY', condition, current_state: expiry }))
      return true;
  return false;
}

/**
 * A new certificate moves both checks (80 % of its validity, and its end) to exact times: the old
 * certificate's checks are cancelled and the new ones enqueued, in the report's transaction.
 */
export async function scheduleCertificateChecks(
  jobs: JobQueue,
  db: Executor,
  nodeId: string,
  notBefore: number,
  notAfter: number,
): Promise<void> {
  for (const threshold of THRESHOLDS) {
    const key = `${nodeId}:${threshold}`;
    await jobs.cancel(db, CERT_EXPIRY_CHECK, key);
    const payload: CertCheck = { nodeId, notAfter, threshold };
    await jobs.enqueue(db, CERT_EXPIRY_CHECK, payload, { key, runAt: at(notBefore, notAfter, threshold) });
  }
}

/** Nodes that became UNREACHABLE at `since` get their headless checks (80 % and all of max_headless_time). */
export async function scheduleHeadlessChecks(
  jobs: JobQueue,
  db: Executor,
  nodes: readonly { id: string; max_headless_time: number }[],
  since: number,
): Promise<void> {
  const keys = nodes.flatMap((node) => THRESHOLDS.map((threshold) => `${node.id}:${threshold}`));
  await jobs.cancelMany(db, HEADLESS_EXPIRY_CHECK, keys);
  await jobs.enqueueMany(
    db,
    nodes.flatMap((node) =>
      THRESHOLDS.map((threshold) => {
        const payload: HeadlessCheck = { nodeId: node.id, since, threshold };
        const runAt = at(since, since + node.max_headless_time * MINUTE_MS, threshold);
        return { kind: HEADLESS_EXPIRY_CHECK, payload, options: { key: `${node.id}:${threshold}`, runAt } };
      }),
    ),
  );
}

/** A node that reports again is not headless: its checks go. */
export async function cancelHeadlessChecks(jobs: JobQueue, db: Executor, nodeId: string): Promise<void> {
  await jobs.cancelMany(
    db,
    HEADLESS_EXPIRY_CHECK,
    THRESHOLDS.map((threshold) => `${nodeId}:${threshold}`),
  );
}

/**
 * Stores the expiry event unless it is stored already (a job may run twice), with the node's next
 * sequence, in one transaction. `stillHolds` re-reads the node inside it.
 */
async function storeExpiryEvent(
  ctx: AppContext,
  nodeId: string,
  type: 'CERT_EXPIRY' | 'HEADLESS_EXPIRY',
  threshold: Threshold,
  expiresAt: (node: {
    cert_not_after: number | null;
    state_since: number;
    max_headless_time: number;
  }) => number,
  stillHolds: (node: { node_state: string; cert_not_after: number | null; state_since: number }) => boolean,
): Promise<void> {
  await transaction(ctx.db, async (trx) => {
    const node = await trx.selectFrom('nodes').selectAll().where('id', '=', nodeId).executeTakeFirst();
    if (node === undefined || !stillHolds(node)) return;
    const expiry = isoUtc(expiresAt(node));
    if (await nodeHasEvent(trx, nodeId, { type, condition: threshold, current_state: expiry })) return;
    const now = ctx.clock.now();
    const sequence = node.sequence + 1;
    await trx.updateTable('nodes').set({ sequence }).where('id', '=', nodeId).execute();
    await recordEvents(ctx, trx, [
      {
        id: newId(now),
        type,
        condition: threshold,
        org_id: node.org_id,
        node_id: node.id,
        resource_kind: 'node',
        resource_id: node.id,
        resource_name: node.name,
        previous_state: null,
        current_state: expiry,
        sequence,
        occurred_at: now,
        detected_at: now,
      },
    ]);
  });
}

/** The two exact-time checks as job kinds. */
export function expiryJobs(ctx: AppContext): JobHandler<never>[] {
  const cert: JobHandler<CertCheck> = {
    kind: CERT_EXPIRY_CHECK,
    concurrency: 4,
    handle: (check) =>
      storeExpiryEvent(
        ctx,
        check.nodeId,
        'CERT_EXPIRY',
        check.threshold,
        () => check.notAfter,
        (node) => node.cert_not_after === check.notAfter,
      ),
  };
  const headless: JobHandler<HeadlessCheck> = {
    kind: HEADLESS_EXPIRY_CHECK,
    concurrency: 4,
    handle: (check) =>
      storeExpiryEvent(
        ctx,
        check.nodeId,
        'HEADLESS_EXPIRY',
        check.threshold,
        (node) => node.state_since + node.max_headless_time * MINUTE_MS,
        (node) => node.node_state === 'UNREACHABLE' && node.state_since === check.since,
      ),
  };
  return [cert, headless] as JobHandler<never>[];
}
