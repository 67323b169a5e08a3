import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { databaseNow } from '../../db/now.js';
import { transaction } from '../../db/transaction.js';
import { recordOutcome } from './outcome.js';
import { claimDue, type ClaimedDelivery } from './claim-repo.js';
import * as repo from './repo.js';
import { sendDelivery, type SendOutcome } from './send.js';

/** The wake that producers of deliveries send after their commit (the job queue's channel carries it). */
export const DELIVERIES_WAKE = 'deliveries';

/**
 * Test seams: awaited at the racy points of a run, so a test can run a competing step exactly there.
 * Production passes none.
 */
export interface DispatchPauses {
  /** Inside the claim's transaction, once the ready webhooks are locked and before their slots are counted. */
  inClaim?: () => Promise<void>;
  /** Between the claim's commit and the requests. */
  afterClaim?: (claimed: readonly ClaimedDelivery[]) => Promise<void>;
  /** Inside the outcome's transaction, after the webhook's row was read (and locked). */
  inOutcome?: (delivery: ClaimedDelivery, trx: Executor) => Promise<void>;
}

export interface DispatcherOptions {
  /** Requests in flight in this process at most. */
  concurrency: number;
  pauses?: DispatchPauses;
}

/** An outcome that could not be written is tried again this often before the lease is left to run out. */
const RECORD_TRIES = 3;

/**
 * Sends webhook deliveries, claimed straight from the deliveries table (docs/deliveries.md). A claim takes
 * due deliveries only as far as each webhook's gate and slots allow, across every process; each claimed
 * delivery is sent at once (nothing waits inside a lease) and its outcome recorded, fenced by its claim.
 */
export class Dispatcher {
  private readonly inFlight = new Map<string, { delivery: ClaimedDelivery; done: Promise<void> }>();
  private wakeRequested = true;
  private wakeUp: (() => void) | undefined;
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private pollTimer: NodeJS.Timeout | undefined;
  private stopWake: (() => void) | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly options: DispatcherOptions,
  ) {}

  /** A lease outlives the request's deadline, so it never runs out under a live run. */
  get leaseMs(): number {
    return this.ctx.config.deliveryTimeoutMs + this.ctx.config.jobLeaseMs;
  }

  start(): void {
    this.stopWake = this.ctx.jobs.onWake((kind) => {
      if (kind === DELIVERIES_WAKE) this.wake();
    });
    // The safety net under the wakes: a retry time that came, a dead process's lease run out.
    this.pollTimer = setInterval(() => this.wake(), this.ctx.config.jobPollIntervalMs);
    this.loop = this.run();
  }

  wake(): void {
    this.wakeRequested = true;
    this.wakeUp?.();
  }

  /** Stops claiming; runs still out get until the deadline, then their leases go back (due at once). */
  stop(timeoutMs: number): Promise<void> {
    this.stopped ??= this.shutdown(timeoutMs);
    return this.stopped;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    this.stopping = true;
    clearInterval(this.pollTimer);
    this.stopWake?.();
    this.wakeUp?.();
    await this.loop;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all([...this.inFlight.values()].map((run) => run.done)), deadline]);
    clearTimeout(timer);
    const left = [...this.inFlight.values()].map((run) => run.delivery);
    if (left.length > 0) {
      await repo.releaseLeases(this.ctx.db, left);
      this.ctx.logger.warn({ released: left.length }, 'delivery leases given back');
    }
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const free = this.options.concurrency - this.inFlight.size;
      if (free <= 0 || !this.wakeRequested) {
        await new Promise<void>((resolve) => (this.wakeUp = resolve));
        this.wakeUp = undefined;
        continue;
      }
      this.wakeRequested = false;
      const claimed = await this.claim(free);
      for (const delivery of claimed) this.launch(delivery);
      // A full batch may have left more behind: look again at once.
      if (claimed.length === free) this.wakeRequested = true;
    }
  }

  /** Claims and sends what is due now, until nothing is: for one-off use and for tests. Returns how many ran. */
  async runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.claim(this.options.concurrency);
      if (claimed.length === 0) return total;
      total += claimed.length;
      await Promise.all(claimed.map((delivery) => this.deliver(delivery)));
    }
  }

  private async claim(limit: number): Promise<ClaimedDelivery[]> {
    const { ctx } = this;
    try {
      const claim = await transaction(ctx.db, (trx) =>
        claimDue(trx, {
          now: databaseNow(trx, ctx.clock),
          leaseMs: this.leaseMs,
          limit,
          perWebhook: ctx.config.deliveryConcurrencyPerWebhook,
          ...(this.options.pauses?.inClaim === undefined ? {} : { afterLock: this.options.pauses.inClaim }),
        }),
      );
      if (claim.held + claim.resumed > 0) {
        // A producer raced a change of its webhook's state: put right here, as the rules expect.
        ctx.logger.info(
          { held: claim.held, resumed: claim.resumed },
          'deliveries moved to their webhook state',
        );
        if (claim.held > 0) ctx.alertMetrics.notificationsEntered(ctx.db, 'held', null, claim.held);
      }
      if (claim.claimed.length > 0) await this.options.pauses?.afterClaim?.(claim.claimed);
      return claim.claimed;
    } catch (error) {
      ctx.logger.error({ err: error }, 'claiming deliveries failed');
      return [];
    }
  }

  private launch(delivery: ClaimedDelivery): void {
    const done = this.deliver(delivery).finally(() => {
      this.inFlight.delete(delivery.id);
      // A slot is free, and the outcome may have opened or closed a gate: look again.
      this.wake();
    });
    this.inFlight.set(delivery.id, { delivery, done });
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { ctx } = this;
    const sent = await sendDelivery(ctx, delivery);
    ctx.alertMetrics.deliveryAttempt(sent.attempt.failure ?? 'success');
    const recorded = await this.record(delivery, sent);
    if (recorded) ctx.logger.debug({ delivery: delivery.id, ok: sent.ok }, 'delivery recorded');
    if (recorded && sent.ok) {
      ctx.alertMetrics.delivered((sent.attempt.at + sent.attempt.durationMs - delivery.occurred_at) / 1000);
    }
  }

  private async record(delivery: ClaimedDelivery, sent: SendOutcome): Promise<boolean> {
    const { pauses } = this.options;
    const pause =
      pauses?.inOutcome === undefined ? undefined : (trx: Executor) => pauses.inOutcome!(delivery, trx);
    for (let tries = 1; ; tries += 1) {
      try {
        const recorded = await recordOutcome(this.ctx, delivery, sent, pause);
        if (!recorded) {
          this.ctx.logger.info(
            { delivery: delivery.id, attempt: delivery.attempts },
            'delivery outcome not recorded: the delivery was taken over or removed meanwhile',
          );
        }
        return recorded;
      } catch (error) {
        if (tries === RECORD_TRIES) {
          // Its lease runs out and the delivery is sent again: at least once, never lost.
          this.ctx.logger.error({ err: error, delivery: delivery.id }, 'recording a delivery outcome failed');
          return false;
        }
      }
    }
  }
}
