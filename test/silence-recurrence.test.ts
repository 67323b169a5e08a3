import { describe, expect, it } from 'vitest';
import {
  knownTimeZone,
  lastOccurrenceBy,
  localDay,
  minuteOfDay,
  nextOccurrence,
  occurrenceAt,
  offsetAt,
  shortestGapMinutes,
  zonedInstant,
  type Recurrence,
} from '../src/features/silences/recurrence.js';

// The time arithmetic of recurring maintenance windows, on fixed dates: Paris went to summer time on
// Sunday 30 March 2025 (02:00 CET → 03:00 CEST) and back on Sunday 26 October 2025 (03:00 CEST → 02:00 CET).

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const PARIS = 'Europe/Paris';
const local = (date: string, time: string, zone = PARIS) =>
  iso(zonedInstant(localDay(date), minuteOfDay(time)!, zone));

const daily = (start: string, duration_minutes: number, timezone = PARIS): Recurrence => ({
  frequency: 'daily',
  start,
  duration_minutes,
  timezone,
});

/** The starts of the occurrences one after the other from `from`, `count` of them. */
function starts(recurrence: Recurrence, from: string, count: number): string[] {
  const found: string[] = [];
  let instant = at(from);
  for (let k = 0; k < count; k += 1) {
    const next = nextOccurrence(recurrence, instant);
    if (next === undefined) break;
    found.push(iso(next.start));
    instant = next.start;
  }
  return found;
}

describe('a local time on a local date', () => {
  it('is read with the offset of that date', () => {
    expect(local('2025-03-29', '09:00')).toBe('2025-03-29T08:00:00.000Z');
    expect(local('2025-03-31', '09:00')).toBe('2025-03-31T07:00:00.000Z');
    expect(local('2025-07-14', '00:00')).toBe('2025-07-13T22:00:00.000Z');
    expect(local('2025-03-09', '09:00', 'America/New_York')).toBe('2025-03-09T13:00:00.000Z');
    expect(local('2025-01-15', '09:00', 'Asia/Kolkata')).toBe('2025-01-15T03:30:00.000Z');
    expect(local('2025-01-15', '09:00', 'Australia/Sydney')).toBe('2025-01-14T22:00:00.000Z');
    expect(offsetAt(at('2025-06-01T12:00:00Z'), PARIS)).toBe(2 * 3_600_000);
  });

  it('that the clocks skip is moved on by the gap (spring forward)', () => {
    expect(local('2025-03-30', '02:00')).toBe('2025-03-30T01:00:00.000Z'); // 03:00 CEST
    expect(local('2025-03-30', '02:30')).toBe('2025-03-30T01:30:00.000Z'); // 03:30 CEST
    expect(local('2025-03-30', '03:00')).toBe('2025-03-30T01:00:00.000Z');
    expect(local('2025-03-30', '01:59')).toBe('2025-03-30T00:59:00.000Z');
    expect(local('2025-03-09', '02:30', 'America/New_York')).toBe('2025-03-09T07:30:00.000Z'); // 03:30 EDT
    expect(local('2025-10-05', '02:15', 'Australia/Sydney')).toBe('2025-10-04T16:15:00.000Z'); // 03:15 AEDT
  });

  it('that the clocks show twice is the first of the two (fall back)', () => {
    expect(local('2025-10-26', '02:00')).toBe('2025-10-26T00:00:00.000Z'); // 02:00 CEST
    expect(local('2025-10-26', '02:30')).toBe('2025-10-26T00:30:00.000Z'); // 02:30 CEST, not CET
    expect(local('2025-10-26', '03:00')).toBe('2025-10-26T02:00:00.000Z'); // after the change: CET
    expect(local('2025-10-26', '01:59')).toBe('2025-10-25T23:59:00.000Z');
    expect(local('2025-11-02', '01:30', 'America/New_York')).toBe('2025-11-02T05:30:00.000Z'); // EDT
  });
});

describe('occurrences', () => {
  it('open at the same local time through the week Paris goes to summer time', () => {
    expect(starts(daily('09:00', 60), '2025-03-26T12:00:00Z', 7)).toEqual([
      '2025-03-27T08:00:00.000Z',
      '2025-03-28T08:00:00.000Z',
      '2025-03-29T08:00:00.000Z',
      '2025-03-30T07:00:00.000Z',
      '2025-03-31T07:00:00.000Z',
      '2025-04-01T07:00:00.000Z',
      '2025-04-02T07:00:00.000Z',
    ]);
    // 02:30 does not exist on the Sunday: that occurrence opens at 03:30 summer time.
    expect(starts(daily('02:30', 60), '2025-03-28T12:00:00Z', 3)).toEqual([
      '2025-03-29T01:30:00.000Z',
      '2025-03-30T01:30:00.000Z',
      '2025-03-31T00:30:00.000Z',
    ]);
  });

  it('open at the same local time through the week Paris goes back to standard time', () => {
    expect(starts(daily('09:00', 60), '2025-10-24T12:00:00Z', 3)).toEqual([
      '2025-10-25T07:00:00.000Z',
      '2025-10-26T08:00:00.000Z',
      '2025-10-27T08:00:00.000Z',
    ]);
    // 02:30 happens twice on the Sunday: the occurrence opens at the first.
    expect(starts(daily('02:30', 60), '2025-10-24T12:00:00Z', 3)).toEqual([
      '2025-10-25T00:30:00.000Z',
      '2025-10-26T00:30:00.000Z',
      '2025-10-27T01:30:00.000Z',
    ]);
  });

  it('last their duration in real minutes, across a clock change too', () => {
    const night = daily('22:00', 8 * 60);
    expect(occurrenceAt(night, at('2025-03-30T04:59:59Z'))).toEqual({
      start: at('2025-03-29T21:00:00Z'),
      end: at('2025-03-30T05:00:00Z'), // 07:00 summer time: eight hours later
    });
    expect(occurrenceAt(night, at('2025-03-30T05:00:00Z'))).toBeUndefined();
  });

  it('contain their start and not their end, and the one open is found from the next day too', () => {
    const morning = daily('09:00', 60);
    expect(occurrenceAt(morning, at('2025-03-27T08:00:00Z'))?.start).toBe(at('2025-03-27T08:00:00Z'));
    expect(occurrenceAt(morning, at('2025-03-27T08:59:59.999Z'))?.end).toBe(at('2025-03-27T09:00:00Z'));
    expect(occurrenceAt(morning, at('2025-03-27T09:00:00Z'))).toBeUndefined();
    expect(occurrenceAt(morning, at('2025-03-27T07:59:59Z'))).toBeUndefined();
    // Friday 20:00 for two days: open on Sunday, two local dates later.
    const weekend: Recurrence = {
      ...morning,
      frequency: 'weekly',
      days: ['FR'],
      start: '20:00',
      duration_minutes: 2880,
    };
    expect(occurrenceAt(weekend, at('2025-03-30T12:00:00Z'))).toEqual({
      start: at('2025-03-28T19:00:00Z'),
      end: at('2025-03-30T19:00:00Z'),
    });
    expect(occurrenceAt(weekend, at('2025-03-31T12:00:00Z'))).toBeUndefined();
  });

  it('open on the days of a weekly window only', () => {
    const weekly: Recurrence = {
      frequency: 'weekly',
      days: ['WE', 'MO'],
      start: '06:15',
      duration_minutes: 30,
      timezone: 'UTC',
    };
    expect(starts(weekly, '2025-03-26T07:00:00Z', 4)).toEqual([
      '2025-03-31T06:15:00.000Z',
      '2025-04-02T06:15:00.000Z',
      '2025-04-07T06:15:00.000Z',
      '2025-04-09T06:15:00.000Z',
    ]);
    expect(occurrenceAt(weekly, at('2025-04-01T06:20:00Z'))).toBeUndefined(); // a Tuesday
    expect(occurrenceAt(weekly, at('2025-04-02T06:20:00Z'))?.start).toBe(at('2025-04-02T06:15:00Z'));
  });

  it('stop at until: none starts after it, and the last to start by it keeps its length', () => {
    const morning = daily('09:00', 120);
    const until = at('2025-03-28T08:00:00Z'); // the start of Friday's
    expect(nextOccurrence(morning, at('2025-03-27T12:00:00Z'), until)?.start).toBe(until);
    expect(nextOccurrence(morning, until, until)).toBeUndefined();
    expect(occurrenceAt(morning, at('2025-03-28T09:30:00Z'), until)?.end).toBe(at('2025-03-28T10:00:00Z'));
    expect(occurrenceAt(morning, at('2025-03-29T08:30:00Z'), until)).toBeUndefined();
    expect(lastOccurrenceBy(morning, until)).toEqual({ start: until, end: at('2025-03-28T10:00:00Z') });
    expect(lastOccurrenceBy(morning, until - 1)?.start).toBe(at('2025-03-27T08:00:00Z'));
  });
});

describe('the schedule’s rules', () => {
  it('reads times of day as HH:MM only', () => {
    expect(minuteOfDay('00:00')).toBe(0);
    expect(minuteOfDay('23:59')).toBe(1439);
    expect(minuteOfDay('09:05')).toBe(545);
    for (const bad of ['24:00', '9:00', '09:60', '09:00:00', '0900', '', 'noon'])
      expect(minuteOfDay(bad)).toBeUndefined();
  });

  it('knows the time zones Intl knows, by their canonical names', () => {
    expect(knownTimeZone('Europe/Paris')).toBe('Europe/Paris');
    expect(knownTimeZone('europe/paris')).toBe('Europe/Paris');
    expect(knownTimeZone('UTC')).toBe('UTC');
    expect(knownTimeZone('Mars/Olympus_Mons')).toBeUndefined();
    expect(knownTimeZone('')).toBeUndefined();
  });

  it('measures the shortest stretch from one occurrence to the next', () => {
    expect(shortestGapMinutes({ frequency: 'daily' })).toBe(1440);
    expect(shortestGapMinutes({ frequency: 'weekly', days: ['MO'] })).toBe(7 * 1440);
    expect(shortestGapMinutes({ frequency: 'weekly', days: ['MO', 'TH'] })).toBe(3 * 1440);
    expect(shortestGapMinutes({ frequency: 'weekly', days: ['SU', 'MO'] })).toBe(1440);
    expect(shortestGapMinutes({ frequency: 'weekly', days: ['SA', 'TU'] })).toBe(3 * 1440);
  });
});
