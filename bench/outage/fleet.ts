// The outage's fleet, made through the API as an operator would (one POST a node: there is no bulk
// registration), its agents' reports, and the liveness sweep's timing, against which the last reports go.
import { setTimeout as sleep } from 'node:timers/promises';
import { SWEEP_EVERY_MS } from '../../src/features/fleet/liveness/sweep.js';
import { HEARTBEAT_FLUSH_MS } from '../../src/features/fleet/reports/heartbeats.js';
import type { AdminApi } from '../lib/api.js';
import { ReportSender, sendBurst, sendPaced } from '../lib/reports.js';

export const orgName = (n: number) => `outage-org-${n}`;

/** Node k in organization k mod `orgs`, so that each batch of the sweep holds some of every organization. */
export async function registerFleet(api: AdminApi, orgs: number, perOrg: number) {
  const orgIds: string[] = [];
  for (let n = 0; n < orgs; n += 1)
    orgIds.push((await api.call('POST', '/api/v1/org', { name: orgName(n) })).id);
  const tokens = new Array<string>(orgs * perOrg);
  let next = 0;
  const lane = async () => {
    for (let k = next++; k < tokens.length; k = next++) {
      const body = { name: `outage-${k}`, create_under: orgIds[k % orgs] };
      tokens[k] = (await api.call('POST', '/api/v1/node', body)).token;
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  return tokens;
}

/** The agents of `tokens` (after the first, a report is a heartbeat); a failed report stops the run. */
export function agents(baseUrl: string, tokens: string[]) {
  const sender = new ReportSender([baseUrl], (k) => tokens[k]!, 48);
  const plan = (k: number) => ({ node: k, body: '{"software_version":"2.4.1"}' });
  const checked = () => {
    if (sender.failed > 0) throw new Error(`a report failed: ${sender.firstFailure}`);
  };
  return {
    /** Every node once, 48 in flight. */
    burst: () => sendBurst(sender, tokens.length, plan, 48).then(checked),
    /** Every node every `everyMs`, paced, a fifth of the fleet at a time, until the returned stop. */
    keepReporting(everyMs: number) {
      let on = true;
      const [size, rate] = [Math.ceil(tokens.length / 5), (tokens.length * 1000) / everyMs];
      const loop = (async () => {
        for (let from = 0; on; from = (from + size) % tokens.length)
          await sendPaced(sender, Math.min(size, tokens.length - from), (k) => plan(from + k), rate);
      })();
      return () => ((on = false), loop.then(checked));
    },
    close: () => sender.close(),
  };
}

/**
 * A pass of the sweep at tick t (every SWEEP_EVERY_MS) reads its clock at t + phase (the worker's 1 s poll
 * claims it) and turns the nodes last seen before that − timeout − HEARTBEAT_FLUSH_MS. The phase comes from
 * `probeId`, a node reported once and left silent; then this waits for the next cut-off plus `driftMs` (the
 * phase only grows), so that reports sent within the following 3 s are all found by one pass. `meanwhile`
 * runs once the probe is found, before the wait: what it sets up (the alerts) does not see the probe's event.
 */
export async function awaitSweepWindow(
  api: AdminApi,
  probeId: string,
  timeoutS: number,
  meanwhile: () => Promise<void>,
  driftMs = 400,
) {
  while ((await api.call('GET', `/api/v1/node/${probeId}`)).node_state !== 'UNREACHABLE') await sleep(100);
  await meanwhile();
  const [event] = (await api.call('GET', `/api/v2/event?node_id=${probeId}&size=1`)).results;
  const lag = timeoutS * 1_000 + HEARTBEAT_FLUSH_MS - (Date.parse(event.detected_at) % SWEEP_EVERY_MS);
  const opens = Math.ceil((Date.now() + lag - driftMs) / SWEEP_EVERY_MS) * SWEEP_EVERY_MS - lag + driftMs;
  await sleep(Math.max(0, opens - Date.now()));
}

/** The detected_at of every UNREACHABLE event since `from`: one per node, one time per pass of the sweep. */
export async function unreachableEvents(api: AdminApi, from: number) {
  const times: number[] = [];
  for (let page = 0, full = true; full; page += 1) {
    const query = `type=NODE_STATE_CHANGE&start_date=${from}&size=100&page=${page}`;
    const { results } = await api.call('GET', `/api/v2/event?${query}`);
    for (const e of results) if (e.condition === 'UNREACHABLE') times.push(Date.parse(e.detected_at));
    full = results.length === 100;
  }
  return { events: times.length, passes: new Set(times).size, detectedAt: Math.min(...times) };
}
