import type { AppContext } from './context.js';
import { Dispatcher, type DispatchPauses } from './features/deliveries/dispatcher.js';
import { strandedSweepJob } from './features/deliveries/sweep.js';
import { expiryJobs } from './features/fleet/expiry/jobs.js';
import { fleetSnapshotJob } from './features/fleet/history/snapshot.js';
import { livenessJob } from './features/fleet/liveness/sweep.js';
import { alertCheckJob } from './features/notifications/check-job.js';
import { incidentFlushJob } from './features/incidents/flush.js';
import { pruneRetentionJob } from './features/retention/prune.js';
import { silenceEndJob } from './features/silences/end-job.js';
import type { JobHandler } from './jobs/worker.js';
import { Worker } from './jobs/worker.js';

/** Requests to webhooks in flight in one process at most. */
export const DELIVERY_CONCURRENCY = 64;

/** Every kind of job, with its handler: the background role's composition, as app.ts is the API's. */
export function jobHandlers(ctx: AppContext): JobHandler<never>[] {
  return [
    ctx.mailer.sendJob(),
    pruneRetentionJob(ctx),
    livenessJob(ctx),
    fleetSnapshotJob(ctx),
    ...expiryJobs(ctx),
    alertCheckJob(ctx),
    silenceEndJob(ctx),
    incidentFlushJob(ctx),
    strandedSweepJob(ctx),
  ];
}

/** A job worker for this process over the shared context, running every kind (or the ones named). */
export function createWorker(ctx: AppContext, kinds?: readonly string[]): Worker {
  const handlers = jobHandlers(ctx).filter((handler) => kinds === undefined || kinds.includes(handler.kind));
  return new Worker({
    db: ctx.db,
    queue: ctx.jobs,
    clock: ctx.clock,
    logger: ctx.logger,
    handlers,
    pollMs: ctx.config.jobPollIntervalMs,
    leaseMs: ctx.config.jobLeaseMs,
    metrics: ctx.jobMetrics,
  });
}

/** What a worker process runs in the background: the job worker and the webhook delivery dispatcher. */
export interface Background {
  worker: Worker;
  dispatcher: Dispatcher;
  start(): Promise<void>;
  /** Both stop claiming; what is running gets until the deadline, then its leases go back. */
  stop(timeoutMs: number): Promise<void>;
}

export function createBackground(ctx: AppContext, options: { pauses?: DispatchPauses } = {}): Background {
  const worker = createWorker(ctx);
  const dispatcher = new Dispatcher(ctx, {
    concurrency: DELIVERY_CONCURRENCY,
    ...(options.pauses === undefined ? {} : { pauses: options.pauses }),
  });
  return {
    worker,
    dispatcher,
    async start() {
      // The worker listens for wakes on PostgreSQL; the dispatcher hears its own through the same queue.
      await worker.start();
      dispatcher.start();
    },
    async stop(timeoutMs) {
      await Promise.all([worker.stop(timeoutMs), dispatcher.stop(timeoutMs)]);
    },
  };
}
