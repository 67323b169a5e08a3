import type { GroupBy } from '../../db/types.js';
import { defaultGroupBy, GROUP_TIMES } from '../alerts/grouping.js';
import type { EventRow, WatchingAlert } from '../notifications/repo.js';
import type { Timing } from './timeline.js';

/**
 * What an alert's grouping settings mean for one event (docs/rules/alerts-and-fleet.md#grouping): which
 * incident it belongs to, whether it fires or recovers a member, and the incident's times.
 */

/** The good state of each type that has one: a member recovers when its resource returns to it. */
const GOOD_STATES: Readonly<Record<string, string>> = {
  NODE_STATE_CHANGE: 'ALIVE',
  TUNNEL_STATE_CHANGE: 'CONNECTED',
  SERVICE_STATE_CHANGE: 'HEALTHY',
};

export function groupByOf(alert: WatchingAlert): GroupBy {
  return alert.group_by ?? defaultGroupBy(alert.channel_type);
}

export function isGrouped(alert: WatchingAlert): boolean {
  return groupByOf(alert) !== 'none';
}

export function goodStateOf(type: string): string | undefined {
  return GOOD_STATES[type];
}

export function recoversByType(type: string): boolean {
  return GOOD_STATES[type] !== undefined;
}

/** The event returns its resource to its type's good state. */
export function isRecovery(event: EventRow): boolean {
  return GOOD_STATES[event.type] === event.current_state;
}

/** The incident an event belongs to: its resource's organization, or its node. */
export function groupKeyOf(alert: WatchingAlert, event: EventRow): string {
  return groupByOf(alert) === 'node' ? event.node_id : event.org_id;
}

/** A member is the resource; for a type without a good state, each event is a member of its batch. */
export function memberKeyOf(event: EventRow): string {
  return recoversByType(event.type) ? event.resource_id : event.id;
}

const seconds = (stored: number | null, fallback: number) => (stored ?? fallback) * 1_000;

export function timingOf(alert: WatchingAlert): Timing {
  return {
    waitMs: seconds(alert.group_wait_s, GROUP_TIMES.group_wait.fallback),
    intervalMs: seconds(alert.group_interval_s, GROUP_TIMES.group_interval.fallback),
    // PagerDuty escalates by itself: its incident is not sent again.
    repeatMs:
      alert.channel_type === 'pagerduty'
        ? 0
        : seconds(alert.repeat_interval_s, GROUP_TIMES.repeat_interval.fallback),
    recovers: recoversByType(alert.type),
  };
}
