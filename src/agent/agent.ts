import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentReport } from '../features/fleet/reports/schemas.js';
import { backoffDelayMs } from './backoff.js';
import type { AgentLog } from './log.js';
import type { PendingReport } from './pending.js';
import type { SendOutcome } from './sender.js';

/** sysexits: the configuration (here, the token) is wrong, and a restart would not help. */
export const EXIT_CONFIG = 78;

/** What the loop is given: its settings, and the parts that touch the machine and the network. */
export interface AgentParts {
  settings: {
    server: string;
    tokenFile: string;
    checkSeconds: number;
    /** Undefined: the server's report_interval_s. */
    heartbeatSeconds: number | undefined;
    maxBackoffSeconds: number;
  };
  /** The device's state now. */
  probe(): Promise<AgentReport>;
  /** One request: a report, or a heartbeat without one. */
  send(token: string, report: AgentReport | undefined): Promise<SendOutcome>;
  readToken(): string;
  pending: PendingReport;
  log: AgentLog;
  random?: () => number;
}

/** Reports are at least this far apart; a change inside the gap goes at its end. */
export const REPORT_SPACING_MS = 2_000;
/** Every this many heartbeats, a full report instead: the server's picture is refreshed even if it lost one. */
export const FULL_REPORT_EVERY = 10;
/** Until the server has said its report_interval_s. */
const DEFAULT_HEARTBEAT_S = 30;
const SKEW_WARNING_MS = 60_000;

const monotonic = () => performance.now();
const same = (a: AgentReport | undefined, b: AgentReport | undefined) =>
  a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);

/**
 * The agent: checks the device every `checkSeconds`; sends a report at once when it differs from the last
 * one the server took (at most one every 2 s), else a body-less heartbeat every interval ±10 %, and a full
 * report every tenth. Failed requests back off; what is not sent waits in the state directory. Resolves
 * with the exit status: 0 when `stop` aborts, 78 when the server refuses the token (read again once).
 */
export class Agent {
  private token: string;
  private tokenReread = false;
  /** The last report the server took. */
  private accepted: AgentReport | undefined;
  /** The latest state checked. */
  private current: AgentReport | undefined;
  /** A report to send: a change not taken yet, or (first, after a restart) the one left on disk. */
  private waiting: AgentReport | undefined;
  /** Whether `waiting` is the report left on disk, not sent yet. */
  private restored: boolean;
  private lastReportAt = -Infinity;
  private retryAt = -Infinity;
  private failures = 0;
  private heartbeatDueAt: number;
  private heartbeatsSinceFull = 0;
  private intervalS: number;
  private nextCheckAt = -Infinity;
  private skewTold = false;

  constructor(private readonly parts: AgentParts) {
    this.token = parts.readToken();
    this.intervalS = parts.settings.heartbeatSeconds ?? DEFAULT_HEARTBEAT_S;
    this.heartbeatDueAt = monotonic();
    this.waiting = parts.pending.read();
    this.restored = this.waiting !== undefined;
  }

  async run(stop: AbortSignal): Promise<number> {
    while (!stop.aborted) {
      const now = monotonic();
      if (now >= this.nextCheckAt) {
        await this.check();
        continue;
      }
      const sendAt = this.nextSendAt();
      if (now >= sendAt) {
        const exit = await this.sendNext();
        if (exit !== undefined) return exit;
        continue;
      }
      await sleep(Math.min(this.nextCheckAt, sendAt) - now, undefined, { signal: stop }).catch(() => {});
    }
    return 0;
  }

  private async check(): Promise<void> {
    this.nextCheckAt = monotonic() + this.parts.settings.checkSeconds * 1_000;
    this.current = await this.parts.probe();
    // The report left on disk by the last run goes first, as it was; the state now follows it.
    if (this.restored) return;
    this.queue(this.current);
  }

  /** `report` is to be sent unless the server has it already (the state is what counts, not its path). */
  private queue(report: AgentReport): void {
    if (same(report, this.accepted)) {
      if (this.waiting !== undefined) this.parts.pending.clear();
      this.waiting = undefined;
    } else if (!same(report, this.waiting)) {
      this.waiting = report;
      this.parts.pending.write(report);
    }
  }

  private nextSendAt(): number {
    const due = this.waiting !== undefined ? this.lastReportAt + REPORT_SPACING_MS : this.heartbeatDueAt;
    return Math.max(due, this.retryAt);
  }

  /** One request; the exit status when the agent must stop. */
  private async sendNext(): Promise<number | undefined> {
    const full = this.heartbeatsSinceFull + 1 >= FULL_REPORT_EVERY ? this.current : undefined;
    const report = this.waiting ?? full;
    if (report !== undefined) this.lastReportAt = monotonic();
    const outcome = await this.parts.send(this.token, report);
    switch (outcome.kind) {
      case 'accepted':
        this.taken(report, outcome);
        return undefined;
      case 'rejected':
        // Sending the same report again would be refused again: it counts as sent, and a change replaces it.
        this.parts.log.error(`the server refused the report: ${outcome.why}`);
        this.taken(report, { reportIntervalS: undefined, serverDate: null });
        return undefined;
      case 'retry':
        this.failed(outcome.why, outcome.afterMs);
        return undefined;
      case 'refused':
        return this.refused(outcome.why);
    }
  }

  private taken(
    report: AgentReport | undefined,
    outcome: { reportIntervalS?: number; serverDate: string | null },
  ) {
    if (this.failures > 0) this.parts.log.info(`reached ${this.parts.settings.server} again`);
    this.failures = 0;
    this.retryAt = -Infinity;
    this.tokenReread = false;
    if (report !== undefined) {
      this.accepted = report;
      this.heartbeatsSinceFull = 0;
      this.restored = false;
      if (this.current !== undefined) this.queue(this.current);
    } else this.heartbeatsSinceFull += 1;
    if (this.parts.settings.heartbeatSeconds === undefined && outcome.reportIntervalS !== undefined)
      this.intervalS = outcome.reportIntervalS;
    const jitter = 0.9 + 0.2 * (this.parts.random ?? Math.random)();
    this.heartbeatDueAt = monotonic() + this.intervalS * 1_000 * jitter;
    this.checkSkew(outcome.serverDate);
  }

  private failed(why: string, afterMs: number | undefined): void {
    this.failures += 1;
    const cap = this.parts.settings.maxBackoffSeconds * 1_000;
    const delay = afterMs ?? backoffDelayMs(this.failures, cap, this.parts.random);
    this.retryAt = monotonic() + delay;
    // The first failure of a run says why; the next ones would say it again every few seconds.
    if (this.failures === 1 || afterMs !== undefined)
      this.parts.log.warn(
        `${this.parts.settings.server}: ${why}; trying again in ${(delay / 1000).toFixed(1)} s`,
      );
  }

  private refused(why: string): number | undefined {
    const { server, tokenFile } = this.parts.settings;
    if (!this.tokenReread) {
      // Rotation is a new token in the file: read it once more before giving up.
      this.tokenReread = true;
      try {
        this.token = this.parts.readToken();
        return undefined;
      } catch (error) {
        this.parts.log.error((error as Error).message);
        return EXIT_CONFIG;
      }
    }
    this.parts.log.error(
      `${server} refuses the node token in ${tokenFile} (${why}); put the node's token in that file and restart`,
    );
    return EXIT_CONFIG;
  }

  private checkSkew(serverDate: string | null): void {
    if (this.skewTold || serverDate === null) return;
    const skew = Date.now() - Date.parse(serverDate);
    if (Number.isNaN(skew) || Math.abs(skew) <= SKEW_WARNING_MS) return;
    this.skewTold = true;
    this.parts.log.warn(
      `this clock is ${Math.round(Math.abs(skew) / 1000)} s ${skew > 0 ? 'ahead of' : 'behind'} the server's; certificate and time checks may be off`,
    );
  }
}
