import { badRequest, type ErrorDetail } from '../../http/errors.js';
import { instant } from '../../http/instants.js';
import { isoUtc } from '../../lib/clock.js';
import { NEVER } from './occurrences.js';
import {
  knownTimeZone,
  lastOccurrenceBy,
  minuteOfDay,
  nextOccurrence,
  occurrenceAt,
  shortestGapMinutes,
  WEEKDAYS,
  type Recurrence,
} from './recurrence.js';

/** When a window is open, as stored. */
export interface WindowTimes {
  starts_at: number;
  ends_at: number;
  recurrence: string | null;
  until: number | null;
}

/** What the request says of when the window is open. */
export interface TimesInput {
  starts_at?: string;
  ends_at?: string;
  recurrence?: Recurrence;
  until?: string;
}

/** 400 naming every field in the way, worded as the schema's own refusals are. */
function refuse(problems: ErrorDetail[]): never {
  const [first] = problems;
  const summary = first === undefined ? 'is invalid' : `"${first.field}" ${first.message}`;
  throw badRequest(`Invalid body: ${summary}.`, problems);
}

/** The schedule's own rules; its canonical form when it keeps them all. */
function checkedSchedule(given: Recurrence): Recurrence {
  const problems: ErrorDetail[] = [];
  const timezone = knownTimeZone(given.timezone);
  if (timezone === undefined) {
    problems.push({
      field: 'recurrence.timezone',
      message: `is not a time zone known here ("${given.timezone}"): give an IANA name such as Europe/Paris`,
    });
  }
  if (minuteOfDay(given.start) === undefined) {
    problems.push({ field: 'recurrence.start', message: 'must be a time of day as HH:MM, 00:00 to 23:59' });
  }
  if (given.frequency === 'weekly' && given.days === undefined) {
    problems.push({
      field: 'recurrence.days',
      message: 'is required for a weekly window: the days it opens on',
    });
  }
  if (given.frequency === 'daily' && given.days !== undefined) {
    problems.push({
      field: 'recurrence.days',
      message: 'is for a weekly window only: a daily window opens every day',
    });
  }
  const gap = shortestGapMinutes(given);
  if (given.duration_minutes >= gap) {
    problems.push({
      field: 'recurrence.duration_minutes',
      message: `must be under ${gap} minutes: an occurrence ends before the next one opens`,
    });
  }
  if (problems.length > 0 || timezone === undefined) refuse(problems);
  return {
    frequency: given.frequency,
    ...(given.frequency === 'weekly' ? { days: WEEKDAYS.filter((day) => given.days?.includes(day)) } : {}),
    start: given.start,
    duration_minutes: given.duration_minutes,
    timezone,
  };
}

/**
 * A recurring window's times: its first occurrence is the one open at `now`, else the next; with `until`,
 * its last is the last to start by then. Its span, from the first's start to the last's end (or never),
 * is what finds it among the windows not over.
 */
function recurringTimes(given: Recurrence, until: string | undefined, now: number): WindowTimes {
  const schedule = checkedSchedule(given);
  const bound = instant('until', until, 'body') ?? null;
  if (bound !== null && bound <= now) refuse([{ field: 'until', message: 'must be in the future' }]);
  const first = occurrenceAt(schedule, now, bound) ?? nextOccurrence(schedule, now, bound);
  if (first === undefined) {
    const upcoming = nextOccurrence(schedule, now);
    const at = upcoming === undefined ? 'a later time' : isoUtc(upcoming.start);
    refuse([{ field: 'until', message: `leaves no occurrence: the first would start at ${at}` }]);
  }
  const last = bound === null ? undefined : lastOccurrenceBy(schedule, bound);
  return {
    starts_at: first.start,
    ends_at: last?.end ?? NEVER,
    recurrence: JSON.stringify(schedule),
    until: bound,
  };
}

/** A one-off window's times: from starts_at to ends_at, which must be to come. */
function oneOffTimes(input: TimesInput, now: number): WindowTimes {
  const missing = [
    ...(input.starts_at === undefined ? ['starts_at'] : []),
    ...(input.ends_at === undefined ? ['ends_at'] : []),
  ];
  if (missing.length > 0) {
    throw badRequest(
      'A window needs starts_at and ends_at, or a recurrence.',
      missing.map((field) => ({ field, message: 'is required (or give recurrence)' })),
    );
  }
  if (input.until !== undefined) {
    throw badRequest('until bounds a recurring window only.', [
      { field: 'until', message: 'is for a recurring window only: give it with recurrence' },
    ]);
  }
  const startsAt = instant('starts_at', input.starts_at, 'body') as number;
  const endsAt = instant('ends_at', input.ends_at, 'body') as number;
  checkTimes(startsAt, endsAt, now);
  return { starts_at: startsAt, ends_at: endsAt, recurrence: null, until: null };
}

/**
 * When a window is open, from the request: a one-off window from starts_at to ends_at, or a recurring one
 * by its schedule (docs/rules/alerts-and-fleet.md#recurring-maintenance-windows); never both.
 */
export function timesOf(input: TimesInput, now: number): WindowTimes {
  if (input.recurrence === undefined) return oneOffTimes(input, now);
  const both = (['starts_at', 'ends_at'] as const).filter((field) => input[field] !== undefined);
  if (both.length > 0) {
    throw badRequest(
      'Give a one-off window starts_at and ends_at, or a recurring one recurrence, not both.',
      both.map((field) => ({ field, message: 'cannot be given with recurrence' })),
    );
  }
  return recurringTimes(input.recurrence, input.until, now);
}

function checkTimes(startsAt: number, endsAt: number, now: number): void {
  const problems = [
    ...(endsAt <= startsAt ? [{ field: 'ends_at', message: 'must be after starts_at' }] : []),
    ...(endsAt <= now
      ? [{ field: 'ends_at', message: 'must be in the future: a window past covers nothing' }]
      : []),
  ];
  if (problems.length > 0) throw badRequest('The window’s times do not make a window to come.', problems);
}
