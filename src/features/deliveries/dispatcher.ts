import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/types.js';
import { databaseNow } from '../../db/now.js';
import { transaction } from '../../db/transaction.js';
import { TickBatch } from '../../lib/tick-batch.js';
import { recordOutcome, recordSuccesses, type Recorded, type RunOutcome } from './outcome.js';
import { claimDue, type ClaimedDelivery } from './claim-repo.js';
import * as repo from './repo.js';
import { sendDelivery } from './send.js';

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

/** A request slot of the dispatcher: the delivery it is sending now. */
interface Slot {
  delivery: ClaimedDelivery;
  /** When (performance.now()) the delivery's lease was taken, as far as this process knows. */
  leasedAt: number;
}

/**
 * New work waits at most this long for a claim while requests are out (see `newWork`). Each claim reads every
 * ready webhook's queue; under load, claims every few milliseconds cost PostgreSQL more than the deliveries.
 */
const NEW_WORK_COALESCE_MS = 25;

/** One freed slot in this many is offered to every dispatcher rather than claimed again here at once. */
const SHARE_EVERY = 16;

/** An outcome that could not be written is tried again this often before the lease is left to run out. */
const RECORD_TRIES = 3;

/**
 * Sends webhook deliveries, claimed straight from the deliveries table (docs/deliveries.md). A claim takes
 * due deliveries only as far as each webhook's gate and slots allow, across every process; each claimed
 * delivery is sent at once (nothing waits inside a lease) and its outcome recorded, fenced by its claim.
 */
export class Dispatcher {
  private readonly inFlight = new Map<Slot, { slot: Slot; done: Promise<unknown> }>();
  /** Slots freed so far: every SHARE_EVERY-th is offered to every dispatcher (see `freed`). */
  private freedSlots = 0;
  private wakeRequested = true;
  private wakeUp: (() => void) | undefined;
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private pollTimer: NodeJS.Timeout | undefined;
  private stopWake: (() => void) | undefined;
  private stopped: Promise<void> | undefined;
  private newWorkTimer: NodeJS.Timeout | undefined;
  /** One batch of successes at a time, taking every success that came while the last one was written. */
  private readonly successes = new TickBatch<RunOutcome, Recorded>(
    (outcomes) => recordSuccesses(this.ctx, outcomes),
    {
      oneAtATime: true,
      maxItems: 64,
    },
  );

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
      if (kind === DELIVERIES_WAKE) this.newWork();
    });
    // The safety net under the wakes: a retry time that came, a dead process's lease run out.
    this.pollTimer = setInterval(() => this.wake(), this.ctx.config.jobPollIntervalMs);
    this.loop = this.run();
  }

  wake(): void {
    this.wakeRequested = true;
    this.wakeUp?.();
  }

  /**
   * New deliveries were committed. Idle, the dispatcher claims at once; with requests out, the claim that
   * their next outcome makes takes the new work too, and a claim of its own comes within
   * NEW_WORK_COALESCE_MS at the latest (the new work may be for a webhook with free slots). Under load this
   * spares a claim for every commit, most of which would find the webhooks' slots all taken.
   */
  private newWork(): void {
    if (this.inFlight.size === 0) return this.wake();
    this.newWorkTimer ??= setTimeout(() => {
      this.newWorkTimer = undefined;
      this.wake();
    }, NEW_WORK_COALESCE_MS);
  }

  /** Stops claiming; runs still out get until the deadline, then their leases go back (due at once). */
  stop(timeoutMs: number): Promise<void> {
    this.stopped ??= this.shutdown(timeoutMs);
    return this.stopped;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    this.stopping = true;
    clearInterval(this.pollTimer);
    clearTimeout(this.newWorkTimer);
    this.stopWake?.();
    this.wakeUp?.();
    await this.loop;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all([...this.inFlight.values()].map((run) => run.done)), deadline]);
    clearTimeout(timer);
    const left = [...this.inFlight.values()].map((run) => run.slot.delivery);
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
      // This claim takes whatever new work waited for one.
      clearTimeout(this.newWorkTimer);
      this.newWorkTimer = undefined;
      const { claimed, leasedAt } = await this.claim(free);
      for (const delivery of claimed) this.launch(delivery, leasedAt);
      // A full batch may have left more behind: look again at once.
      if (claimed.length === free) this.wakeRequested = true;
    }
  }

  /** Claims and sends what is due now, until nothing is: for one-off use and for tests. Returns how many ran. */
  async runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const { claimed, leasedAt } = await this.claim(this.options.concurrency);
      if (claimed.length === 0) return total;
      const sent = await Promise.all(claimed.map((delivery) => this.deliver({ delivery, leasedAt })));
      total += sent.filter(Boolean).length;
    }
  }

  /** What the free slots allow, leased; `leasedAt` is when (performance.now()) the claim committed. */
  private async claim(limit: number): Promise<{ claimed: ClaimedDelivery[]; leasedAt: number }> {
    const { ctx } = this;
    // Taken before the claim: the leases it takes start no earlier.
    const leasedAt = performance.now();
    try {
      const claim = await transaction(ctx.db, (trx) =>
        claimDue(trx, {
          clock: ctx.clock,
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
      return { claimed: claim.claimed, leasedAt };
    } catch (error) {
      ctx.logger.error({ err: error }, 'claiming deliveries failed');
      return { claimed: [], leasedAt };
    }
  }

  private launch(delivery: ClaimedDelivery, leasedAt: number): void {
    const slot: Slot = { delivery, leasedAt };
    const done = this.deliver(slot).then(
      () => this.freed(slot),
      (error: unknown) => {
        // Its lease runs out and the delivery goes again: at least once, never lost, never silent.
        this.ctx.logger.error({ err: error, delivery: slot.delivery.id }, 'a delivery run failed');
        this.freed(slot);
      },
    );
    this.inFlight.set(slot, { slot, done });
  }

  /**
   * A slot is free, and the outcome may have opened or closed a gate: look again. Every SHARE_EVERY-th freed
   * slot is offered to every dispatcher instead (the wake every process hears; this one, busy, claims after
   * its new-work wait), so one worker process does not keep a busy webhook's slots for as long as its work
   * lasts, and the others get their share.
   */
  private freed(slot: Slot): void {
    this.inFlight.delete(slot);
    this.freedSlots += 1;
    if (this.freedSlots % SHARE_EVERY !== 0) return this.wake();
    this.ctx.jobs.wakeAfterCommit(this.ctx.db, DELIVERIES_WAKE).catch((error: unknown) => {
      this.ctx.logger.warn({ err: error }, 'announcing a free delivery slot failed');
      this.wake();
    });
  }

  /**
   * Sends one delivery and records the outcome; false when it was not sent (its lease ran out first).
   */
  private async deliver(slot: Slot): Promise<boolean> {
    const { ctx } = this;
    if (!(await this.leaseCoversRequest(slot))) {
      ctx.logger.info(
        { delivery: slot.delivery.id, attempt: slot.delivery.attempts + 1 },
        'delivery not sent: its lease ran out before the request started',
      );
      return false;
    }
    const { delivery } = slot;
    const sent = await sendDelivery(ctx, delivery);
    ctx.alertMetrics.deliveryAttempt(sent.attempt.failure ?? 'success');
    const { recorded } = await this.record({ delivery, sent });
    if (recorded) ctx.logger.debug({ delivery: delivery.id, ok: sent.ok }, 'delivery recorded');
    if (recorded && sent.ok) {
      ctx.alertMetrics.delivered((sent.attempt.at + sent.attempt.durationMs - delivery.occurred_at) / 1000);
    }
    return true;
  }

  /**
   * Whether the lease covers a request starting now, to its deadline. A lease taken moments ago does (it
   * lasts the deadline and JOB_LEASE_MS more); after a stall of half JOB_LEASE_MS it is renewed from now
   * first, only while it is still live and this run's (docs/deliveries.md, rule 2).
   */
  private async leaseCoversRequest(slot: Slot): Promise<boolean> {
    if (performance.now() - slot.leasedAt <= this.ctx.config.jobLeaseMs / 2) return true;
    try {
      const now = databaseNow(this.ctx.db, this.ctx.clock);
      const renewed = await repo.renewLease(this.ctx.db, slot.delivery, now, this.leaseMs);
      if (renewed === undefined) return false;
      slot.delivery = { ...slot.delivery, lease_until: renewed };
      slot.leasedAt = performance.now();
      return true;
    } catch (error) {
      this.ctx.logger.error({ err: error, delivery: slot.delivery.id }, 'renewing a delivery lease failed');
      return false;
    }
  }

  private async record(outcome: RunOutcome): Promise<Recorded> {
    const { delivery, sent } = outcome;
    const { pauses } = this.options;
    const pause =
      pauses?.inOutcome === undefined ? undefined : (trx: Executor) => pauses.inOutcome!(delivery, trx);
    for (let tries = 1; ; tries += 1) {
      try {
        const recorded =
          sent.ok && delivery.consecutive_failures === 0
            ? await this.successes.add(outcome)
            : await recordOutcome(this.ctx, outcome, pause);
        if (!recorded.recorded) {
          this.ctx.logger.info(
            { delivery: delivery.id, attempt: delivery.attempts + 1 },
            'delivery outcome not recorded: the delivery was taken over or removed meanwhile',
          );
        }
        return recorded;
      } catch (error) {
        if (tries === RECORD_TRIES) {
          // Its lease runs out and the delivery is sent again: at least once, never lost.
          this.ctx.logger.error({ err: error, delivery: delivery.id }, 'recording a delivery outcome failed');
          return { recorded: false };
        }
      }
    }
  }
}
