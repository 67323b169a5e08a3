import type { AlertChannelType, GroupBy } from '../../db/types.js';
import type { ErrorDetail } from '../../http/errors.js';

/**
 * How an alert groups its notifications into incidents (docs/rules/alerts-and-fleet.md#grouping): the
 * settings, their ranges and the defaults of each channel.
 */

/** The settings in seconds: the range each accepts, and its column. */
export const GROUP_TIMES = {
  group_wait: { min: 0, max: 600, fallback: 10, column: 'group_wait_s' },
  group_interval: { min: 1, max: 86_400, fallback: 300, column: 'group_interval_s' },
  repeat_interval: { min: 0, max: 604_800, fallback: 14_400, column: 'repeat_interval_s' },
} as const;

export type GroupTime = keyof typeof GROUP_TIMES;
const TIMES = Object.keys(GROUP_TIMES) as GroupTime[];

/**
 * As given: seconds as a whole number, or as its decimal string (what the answers show); null puts a
 * setting back to the channel's default.
 */
export type GroupingInput = { group_by?: GroupBy | null } & { [Time in GroupTime]?: number | string | null };

/** As stored: null where the channel's default applies. */
export interface Grouping {
  group_by: GroupBy | null;
  group_wait_s: number | null;
  group_interval_s: number | null;
  repeat_interval_s: number | null;
}

/**
 * Webhooks' receivers are programs that may expect one request per event; a person reads every other
 * channel, and an outage is one conversation there.
 */
export function defaultGroupBy(channel: AlertChannelType): GroupBy {
  return channel === 'webhook' ? 'none' : 'organization';
}

/** The seconds given, or what is wrong with them. */
function seconds(time: GroupTime, value: number | string): number | ErrorDetail {
  const { min, max } = GROUP_TIMES[time];
  const number = typeof value === 'number' ? value : /^[0-9]{1,7}$/.test(value) ? Number(value) : NaN;
  if (Number.isInteger(number) && number >= min && number <= max) return number;
  return {
    field: `settings.${time}`,
    message: `must be a whole number of seconds from ${min} to ${max.toLocaleString('en-US')}`,
  };
}

/** The grouping to store, or the problems of each field given. */
export function normalizeGrouping(
  input: GroupingInput,
): { ok: true; value: Grouping } | { ok: false; problems: ErrorDetail[] } {
  const value: Grouping = {
    group_by: input.group_by ?? null,
    group_wait_s: null,
    group_interval_s: null,
    repeat_interval_s: null,
  };
  const problems: ErrorDetail[] = [];
  for (const time of TIMES) {
    const given = input[time];
    if (given === undefined || given === null) continue;
    const parsed = seconds(time, given);
    if (typeof parsed === 'number') value[GROUP_TIMES[time].column] = parsed;
    else problems.push(parsed);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value };
}

/** The stored grouping as settings again, for an edit to merge over: only what was chosen. */
export function storedGrouping(row: Grouping): GroupingInput {
  const input: GroupingInput = row.group_by === null ? {} : { group_by: row.group_by };
  for (const time of TIMES) {
    const stored = row[GROUP_TIMES[time].column];
    if (stored !== null) input[time] = stored;
  }
  return input;
}

/** The grouping in force, as answers show it: the channel's defaults filled in, seconds as strings. */
export function presentGrouping(row: Grouping, channel: AlertChannelType) {
  const time = (name: GroupTime) => String(row[GROUP_TIMES[name].column] ?? GROUP_TIMES[name].fallback);
  return {
    group_by: row.group_by ?? defaultGroupBy(channel),
    group_wait: time('group_wait'),
    group_interval: time('group_interval'),
    repeat_interval: time('repeat_interval'),
  };
}
