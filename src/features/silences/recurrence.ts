/**
 * When the occurrences of a recurring maintenance window fall: at a local wall-clock time of day, in a named
 * time zone, every day or on some days of the week. Pure: the zone's offsets come from Intl (the runtime's
 * time-zone data), so a daylight-saving change moves the UTC instant and the local time stays.
 */

export const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface Recurrence {
  frequency: 'daily' | 'weekly';
  /** Weekly: the days it opens on. A daily window opens every day and has none. */
  days?: Weekday[];
  /** The local time of day it opens, "HH:MM". */
  start: string;
  /** Real minutes: an occurrence across a clock change lasts as long as any other. */
  duration_minutes: number;
  /** An IANA time-zone name. */
  timezone: string;
}

/** One occurrence: open from `start` (inclusive) to `end` (exclusive), epoch ms. */
export interface Occurrence {
  start: number;
  end: number;
}

const MINUTE = 60_000;
const DAY = 86_400_000;

/** A local calendar date as days since 1970-01-01, so that dates step by adding. */
type LocalDay = number;

const TIME_OF_DAY = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes since midnight of an "HH:MM" time of day; undefined when it is not one. */
export function minuteOfDay(time: string): number | undefined {
  const match = TIME_OF_DAY.exec(time);
  return match === null ? undefined : Number(match[1]) * 60 + Number(match[2]);
}

/** The zone's canonical name ("europe/paris" → "Europe/Paris"), or undefined when Intl knows no such zone. */
export function knownTimeZone(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** What the zone's clocks show at an instant, written as if it were UTC (epoch ms, whole seconds). */
function wallClock(instant: number, timeZone: string): number {
  const fields: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const { year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = fields;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

/** The zone's offset from UTC at an instant, in ms (Paris in summer: 7,200,000). */
export function offsetAt(instant: number, timeZone: string): number {
  const whole = Math.floor(instant / 1000) * 1000;
  return wallClock(whole, timeZone) - whole;
}

export function localDayOf(instant: number, timeZone: string): LocalDay {
  return Math.floor(wallClock(instant, timeZone) / DAY);
}

/** The local date "YYYY-MM-DD" as a day number. */
export function localDay(date: string): LocalDay {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / DAY);
}

/**
 * The instant a local wall-clock time of a local date has in a zone. A time the clocks skip (spring
 * forward) is moved on by the gap, as the clocks were: 02:30 on the night Paris goes to summer time is
 * 03:30 summer time. A time the clocks show twice (fall back) is the first of the two, before the change.
 */
export function zonedInstant(day: LocalDay, minute: number, timeZone: string): number {
  const wall = day * DAY + minute * MINUTE;
  // Offsets a day either side bracket any one change near that wall time (no zone is more than 14 h off).
  const before = offsetAt(wall - DAY, timeZone);
  const after = offsetAt(wall + DAY, timeZone);
  const shown = [wall - before, wall - after].filter(
    (instant) => instant + offsetAt(instant, timeZone) === wall,
  );
  if (shown.length > 0) return Math.min(...shown);
  // Skipped: read with the offset before the change, it lands as far past the gap as it was into it.
  return wall - before;
}

function weekdayOf(day: LocalDay): Weekday {
  // 1970-01-01 was a Thursday.
  return WEEKDAYS[(((day + 3) % 7) + 7) % 7]!;
}

function opensOn(recurrence: Recurrence, day: LocalDay): boolean {
  return recurrence.frequency === 'daily' || (recurrence.days ?? []).includes(weekdayOf(day));
}

/** The occurrences that open on the local days from `first` to `last`, in order. */
function occurrencesOn(recurrence: Recurrence, first: LocalDay, last: LocalDay): Occurrence[] {
  const minute = minuteOfDay(recurrence.start) ?? 0;
  const occurrences: Occurrence[] = [];
  for (let day = first; day <= last; day += 1) {
    if (!opensOn(recurrence, day)) continue;
    const start = zonedInstant(day, minute, recurrence.timezone);
    // A local date a zone skipped entirely lands on the next one's occurrence: counted once.
    if (occurrences.at(-1)?.start === start) continue;
    occurrences.push({ start, end: start + recurrence.duration_minutes * MINUTE });
  }
  return occurrences;
}

const startsBy = (until: number | null | undefined) => (occurrence: Occurrence) =>
  until === null || until === undefined || occurrence.start <= until;

/**
 * The occurrence open at `instant` (the later one, should two overlap around a clock change), among those
 * that start by `until` when given.
 */
export function occurrenceAt(
  recurrence: Recurrence,
  instant: number,
  until?: number | null,
): Occurrence | undefined {
  const today = localDayOf(instant, recurrence.timezone);
  const reach = Math.ceil(recurrence.duration_minutes / 1440) + 1;
  return occurrencesOn(recurrence, today - reach, today + 1)
    .filter(startsBy(until))
    .filter((occurrence) => occurrence.start <= instant && instant < occurrence.end)
    .at(-1);
}

/** The first occurrence that starts after `instant`, among those that start by `until` when given. */
export function nextOccurrence(
  recurrence: Recurrence,
  instant: number,
  until?: number | null,
): Occurrence | undefined {
  const today = localDayOf(instant, recurrence.timezone);
  return occurrencesOn(recurrence, today - 1, today + 8)
    .filter(startsBy(until))
    .find((occurrence) => occurrence.start > instant);
}

/** The last occurrence that starts at or before `instant`. */
export function lastOccurrenceBy(recurrence: Recurrence, instant: number): Occurrence | undefined {
  const today = localDayOf(instant, recurrence.timezone);
  return occurrencesOn(recurrence, today - 8, today + 1)
    .filter(startsBy(instant))
    .at(-1);
}

/**
 * The least time, in minutes, from one occurrence's start to the next on the calendar (clock changes
 * aside): a day for a daily window; for a weekly one, the shortest stretch between two of its days.
 */
export function shortestGapMinutes(recurrence: Pick<Recurrence, 'frequency' | 'days'>): number {
  if (recurrence.frequency === 'daily') return 1440;
  const indexes = [...new Set(recurrence.days ?? [])]
    .map((day) => WEEKDAYS.indexOf(day))
    .sort((a, b) => a - b);
  if (indexes.length === 0) return 7 * 1440;
  const gaps = indexes.map((index, k) => ((indexes[(k + 1) % indexes.length]! - index + 6) % 7) + 1);
  return Math.min(...gaps) * 1440;
}
