import { excerpt, outputLines, parsed, unreadable, type Parsed } from './result.js';

/** The unit's state as `systemctl show -p LoadState,ActiveState,SubState <unit>` prints it. */
export interface UnitState {
  /** loaded, not-found, masked, bad-setting, error, … */
  loadState: string;
  /** active, reloading, inactive, failed, activating, deactivating, … */
  activeState: string;
  /** The unit type's own state, e.g. running, dead, auto-restart. */
  subState: string;
}

export type ServiceStatus = 'HEALTHY' | 'UNHEALTHY' | 'TERMINATED';

/** A service's status after a check, and what the next check needs to know. */
export interface ServiceCheck {
  status: ServiceStatus;
  /**
   * When the unit was first seen activating or deactivating, with no other state seen since: milliseconds on
   * the clock the caller passes as `nowMs` (a monotonic one is best).
   */
  transitionalSince?: number;
  /** Why it is UNHEALTHY, or why an earlier status is kept. */
  reason?: string;
}

/** How long a unit may stay activating or deactivating before it counts as unhealthy. */
export const TRANSITION_GRACE_MS = 30_000;

const HEALTHY_STATES = new Set(['active', 'reloading', 'refreshing']);
const TRANSITIONAL_STATES = new Set(['activating', 'deactivating']);

/**
 * Reads the KEY=value lines, in any order. systemctl writes its own failures (no bus, not booted with
 * systemd) as plain sentences; such a line makes the check fail with that sentence as the reason.
 */
export function parseUnitState(output: string): Parsed<UnitState> {
  const values = new Map<string, string>();
  for (const line of outputLines(output)) {
    const equals = line.indexOf('=');
    if (equals <= 0) return unreadable(`systemctl printed ${excerpt(line)}`);
    values.set(line.slice(0, equals), line.slice(equals + 1));
  }
  const loadState = values.get('LoadState');
  const activeState = values.get('ActiveState');
  const subState = values.get('SubState');
  if (loadState === undefined || activeState === undefined || subState === undefined) {
    return unreadable(
      output.trim() === '' ? 'systemctl printed nothing' : 'LoadState, ActiveState or SubState missing',
    );
  }
  return parsed({ loadState, activeState, subState });
}

/**
 * The service's next status: HEALTHY when active or reloading; UNHEALTHY when failed, inactive, not found or
 * unreadable; while activating or deactivating (a start or a restart), the previous status, for at most
 * `TRANSITION_GRACE_MS` since that began, then UNHEALTHY.
 */
export function nextServiceStatus(
  unit: Parsed<UnitState>,
  previous: Pick<ServiceCheck, 'status' | 'transitionalSince'>,
  nowMs: number,
): ServiceCheck {
  if ('error' in unit) return { status: 'UNHEALTHY', reason: unit.error };
  const { loadState, activeState, subState } = unit.value;
  if (loadState === 'not-found') return { status: 'UNHEALTHY', reason: 'unit not found' };
  if (HEALTHY_STATES.has(activeState)) return { status: 'HEALTHY' };
  const described = `${activeState} (${subState})${loadState === 'loaded' ? '' : `, ${loadState}`}`;
  if (!TRANSITIONAL_STATES.has(activeState)) return { status: 'UNHEALTHY', reason: described };
  const since = previous.transitionalSince ?? nowMs;
  if (nowMs - since >= TRANSITION_GRACE_MS) {
    return {
      status: 'UNHEALTHY',
      transitionalSince: since,
      reason: `${described} for ${Math.round((nowMs - since) / 1000)} s`,
    };
  }
  return { status: previous.status, transitionalSince: since, reason: `${described}: status kept` };
}
