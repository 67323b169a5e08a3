import type { AppContext } from './context.js';
import { expiryJobs } from './features/fleet/expiry/jobs.js';
import { livenessJob } from './features/fleet/liveness/sweep.js';
import { webhookDeliveryJob } from './features/deliveries/deliver-job.js';
import { alertCheckJob } from './features/notifications/check-job.js';
import { emailDigestJob } from './features/notifications/email-storm.js';
import { pruneRetentionJob } from './features/retention/prune.js';
import { silenceEndJob } from './features/silences/end-job.js';
import type { JobHandler } from './jobs/worker.js';
import { Worker } from './jobs/worker.js';

/** Every kind of background work, with its handler: the worker role's composition, as app.ts is the API's. */
export function jobHandlers(ctx: AppContext): JobHandler<never>[] {
  return [
    ctx.mailer.sendJob(),
    pruneRetentionJob(ctx),
    livenessJob(ctx),
    ...expiryJobs(ctx),
    alertCheckJob(ctx),
    webhookDeliveryJob(ctx),
    silenceEndJob(ctx),
    emailDigestJob(ctx),
  ];
}

/** A worker for this process over the shared context, running every kind (or the ones named). */
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
