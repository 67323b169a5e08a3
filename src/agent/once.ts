import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentReport } from '../features/fleet/reports/schemas.js';
import { EXIT_CONFIG, type AgentParts } from './agent.js';
import { backoffDelayMs } from './backoff.js';

/** sysexits: the server could not be reached in time; trying later may work. */
export const EXIT_TEMPORARY = 75;
/** sysexits: the server refused the report's content. */
export const EXIT_DATA = 65;
/** How long `--once` keeps trying through network errors, 429 and 5xx. */
export const ONCE_DEADLINE_MS = 30_000;

/**
 * `--once`: one full report; the exit status: 0 when the server took it, 75 when it could not within 30 s,
 * 78 when it refused the token (read again once), 65 when it refused the report.
 */
export async function sendOnce(
  parts: Omit<AgentParts, 'pending'>,
  time: { now(): number; sleep(ms: number): Promise<unknown> } = { now: Date.now, sleep },
): Promise<number> {
  const { settings, log } = parts;
  const report: AgentReport = await parts.probe();
  const deadline = time.now() + ONCE_DEADLINE_MS;
  let token = parts.readToken();
  let tokenReread = false;
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await parts.send(token, report);
    if (outcome.kind === 'accepted') return 0;
    if (outcome.kind === 'rejected') {
      log.error(`the server refused the report: ${outcome.why}`);
      return EXIT_DATA;
    }
    if (outcome.kind === 'refused') {
      if (tokenReread) {
        log.error(`${settings.server} refuses the node token in ${settings.tokenFile} (${outcome.why})`);
        return EXIT_CONFIG;
      }
      tokenReread = true;
      token = parts.readToken();
      continue;
    }
    const delay =
      outcome.afterMs ?? backoffDelayMs(attempt, settings.maxBackoffSeconds * 1_000, parts.random);
    if (time.now() + delay > deadline) {
      log.error(`${settings.server}: ${outcome.why}; giving up after ${ONCE_DEADLINE_MS / 1000} s`);
      return EXIT_TEMPORARY;
    }
    log.warn(`${settings.server}: ${outcome.why}; trying again in ${(delay / 1000).toFixed(1)} s`);
    await time.sleep(delay);
  }
}
