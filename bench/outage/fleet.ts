// The outage's fleet, made through the API as an operator would: organizations below the root, nodes
// registered in each (there is no bulk registration: one POST /api/v1/node a node, many in flight), and the
// agents' reports: in bursts timed against the liveness sweep's ticks, or kept up as a fleet keeps reporting.
import { setTimeout as sleep } from 'node:timers/promises';
import { SWEEP_EVERY_MS } from '../../src/features/fleet/liveness/sweep.js';
import { HEARTBEAT_FLUSH_MS } from '../../src/features/fleet/reports/heartbeats.js';
import type { AdminApi } from '../lib/api.js';
import { ReportSender } from '../lib/reports.js';

/** Requests in flight while registering nodes, and reports in flight in a burst. */
export const REGISTER_IN_FLIGHT = 16;
export const REPORTS_IN_FLIGHT = 48;
/** What every agent reports, each time the same: after its first report, a report is a heartbeat. */
const REPORT = JSON.stringify({ software_version: '2.4.1' });

export const orgName = (n: number) => `outage-org-${n}`;

/**
 * `orgs` organizations below the root and `orgs` × `perOrg` nodes, node k in organization k mod `orgs`: the
 * organizations' agents report interleaved, as independent sites do, so each batch of the sweep holds some of
 * every organization. Returns the nodes' tokens and how long registering them took.
 */
export async function registerFleet(api: AdminApi, orgs: number, perOrg: number) {
  const orgIds: string[] = [];
  for (let n = 0; n < orgs; n += 1)
    orgIds.push((await api.call('POST', '/api/v1/org', { name: orgName(n) })).id as string);
  const tokens = new Array<string>(orgs * perOrg);
  let next = 0;
  const lane = async () => {
    for (let k = next++; k < tokens.length; k = next++) {
      const body = { name: `outage-${k}`, create_under: orgIds[k % orgs] };
      tokens[k] = (await api.call('POST', '/api/v1/node', body)).token as string;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: REGISTER_IN_FLIGHT }, lane));
  return { tokens, ms: performance.now() - started };
}

/** The agents of `tokens`: each node's last answered report (Date.now(); NaN before its first). */
export class Agents {
  readonly lastAt: Float64Array;
  private readonly sender: ReportSender;

  constructor(
    baseUrl: string,
    private readonly tokens: string[],
  ) {
    this.lastAt = new Float64Array(tokens.length).fill(NaN);
    this.sender = new ReportSender([baseUrl], (k) => tokens[k]!, REPORTS_IN_FLIGHT);
  }

  private async report(k: number) {
    const status = await this.sender.send(k, { node: k, body: REPORT });
    if (status < 200 || status >= 300) throw new Error(`a report failed: ${this.sender.firstFailure}`);
    this.lastAt[k] = Date.now();
  }

  /** Every node reports once, `REPORTS_IN_FLIGHT` at a time: when the first was sent and the last answered. */
  async burst() {
    let next = 0;
    const lane = async () => {
      for (let k = next++; k < this.tokens.length; k = next++) await this.report(k);
    };
    const startedAt = Date.now();
    await Promise.all(Array.from({ length: REPORTS_IN_FLIGHT }, lane));
    return { startedAt, answeredAt: Date.now() };
  }

  /**
   * Every node that has reported reports again `everyMs` after its last report, until stopped: a fleet that
   * keeps reporting (a node that has not reported yet is waited for). Returns the stop, which throws if a
   * report failed.
   */
  keepReporting(everyMs: number, lanes = 8) {
    let stopped = false;
    const lane = async (first: number) => {
      while (!stopped)
        for (let k = first; k < this.tokens.length && !stopped; k += lanes) {
          // A node not back yet (NaN) is waited for; no wait is longer than 100 ms, so a stop is prompt.
          while (!stopped && !(this.lastAt[k]! + everyMs <= Date.now()))
            await sleep(
              Number.isNaN(this.lastAt[k]) ? 20 : Math.min(100, this.lastAt[k]! + everyMs - Date.now()),
            );
          if (!stopped) await this.report(k);
        }
    };
    let failure: Error | undefined;
    const running = Promise.all(Array.from({ length: lanes }, (_, n) => lane(n))).catch((error: unknown) => {
      [failure, stopped] = [error instanceof Error ? error : new Error(String(error)), true];
    });
    return async () => {
      stopped = true;
      await running;
      if (failure !== undefined) throw failure;
    };
  }

  close = () => this.sender.close();
}

/**
 * When the sweep reads its clock, past its tick: a periodic job is claimed by the worker's poll (every
 * JOB_POLL_INTERVAL_MS, 1 s by default) after its tick, so the pass of tick t runs at t + phase, the phase
 * fixed by when the poll loop started and growing by a few ms a second. Read from a probe node's
 * UNREACHABLE event: a node registered and reported once, then left silent until the sweep finds it.
 */
export async function sweepPhase(api: AdminApi, baseUrl: string) {
  const { id, token } = await api.call('POST', '/api/v1/node', { name: 'outage-sweep-probe' });
  const probe = new Agents(baseUrl, [token as string]);
  await probe.burst();
  await probe.close();
  return async () => {
    const found = async () => (await api.call('GET', `/api/v1/node/${id}`)).node_state === 'UNREACHABLE';
    while (!(await found())) await sleep(100);
    const [event] = (await api.call('GET', `/api/v2/event?node_id=${id}&size=1`)).results;
    return Date.parse(event.detected_at) % SWEEP_EVERY_MS;
  };
}

/**
 * A pass of the sweep at tick t turns the nodes last seen before t + phase − timeout − HEARTBEAT_FLUSH_MS, so
 * reports between two such cut-offs are all found by one pass. Waits for the next cut-off plus `driftMs` (the
 * phase only grows) and says when the window closes, and the tick of the pass that will find the nodes.
 */
export async function awaitSweepWindow(timeoutS: number, phaseMs: number, driftMs: number) {
  const lag = timeoutS * 1_000 + HEARTBEAT_FLUSH_MS - phaseMs;
  let tick = Math.ceil((Date.now() + lag - driftMs) / SWEEP_EVERY_MS) * SWEEP_EVERY_MS;
  const opens = tick - lag + driftMs;
  await sleep(Math.max(0, opens - Date.now()));
  tick += SWEEP_EVERY_MS;
  return { opensAt: opens, closesAt: tick - lag, passAt: tick };
}
