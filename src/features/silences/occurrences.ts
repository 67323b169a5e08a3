import type { SilencesTable } from '../../db/types.js';
import { nextOccurrence, occurrenceAt, type Occurrence, type Recurrence } from './recurrence.js';

type Window = Pick<SilencesTable, 'starts_at' | 'ends_at' | 'recurrence' | 'until'>;

/** The ends_at of a recurring window without until: the latest instant a Date holds, so never. */
export const NEVER = 8_640_000_000_000_000;

const schedules = new WeakMap<Window, Recurrence>();

/** A recurring window's schedule; undefined for a one-off window. */
export function recurrenceOf(window: Window): Recurrence | undefined {
  if (window.recurrence === null) return undefined;
  let schedule = schedules.get(window);
  if (schedule === undefined) {
    schedule = JSON.parse(window.recurrence) as Recurrence;
    schedules.set(window, schedule);
  }
  return schedule;
}

/**
 * What `openOccurrence` answered for a window, and for which stretch of time the answer holds. Every
 * notification made asks of every window not over; the rows of the matching snapshot live long, so a
 * recurring window's time-zone arithmetic is done once per occurrence, not once per notification.
 */
interface Known {
  from: number;
  to: number;
  open: Occurrence | undefined;
}

const known = new WeakMap<Window, Known>();

/**
 * The occurrence open at `now`: a one-off window's whole span, or the occurrence of a recurring one that
 * contains `now`, cut at ends_at (moved to when it was ended early). Undefined when it is closed.
 */
export function openOccurrence(window: Window, now: number): Occurrence | undefined {
  if (now < window.starts_at || now >= window.ends_at) return undefined;
  const schedule = recurrenceOf(window);
  if (schedule === undefined) return { start: window.starts_at, end: window.ends_at };
  const kept = known.get(window);
  if (kept !== undefined && kept.from <= now && now < kept.to) return kept.open;
  const open = occurrenceAt(schedule, now, window.until);
  // Open: so it stays to its end, or until a later occurrence starts inside it. Closed: until the next.
  const next = nextOccurrence(schedule, open?.start ?? now, window.until);
  const answer =
    open === undefined ? undefined : { start: open.start, end: Math.min(open.end, window.ends_at) };
  const to = Math.min(answer?.end ?? Infinity, next?.start ?? Infinity);
  known.set(window, { from: open?.start ?? now, to, open: answer });
  return answer;
}

/** The occurrence open at `now`, else the next one to open; undefined when none is left. */
export function currentOrNextOccurrence(window: Window, now: number): Occurrence | undefined {
  const open = openOccurrence(window, now);
  if (open !== undefined || now >= window.ends_at) return open;
  const schedule = recurrenceOf(window);
  if (schedule === undefined) return { start: window.starts_at, end: window.ends_at };
  const next = nextOccurrence(schedule, now, window.until);
  if (next === undefined || next.start >= window.ends_at) return undefined;
  return { start: next.start, end: Math.min(next.end, window.ends_at) };
}
