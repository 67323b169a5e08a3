import { Type } from 'typebox';
import { badRequest } from './errors.js';
import { instant } from './instants.js';

export const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** The most points one answer of a series holds (docs/rules/api.md#series). */
export const MAX_POINTS = 2_000;
const MAX_STEP_MS = DAY_MS;
/** The last instant a date can show (year 9999): later ones cannot be written back as ISO 8601. */
const LAST_INSTANT = 253_402_300_799_999;

export const StepQuery = Type.String({
  minLength: 1,
  maxLength: 16,
  description:
    'The width of each point: whole minutes as `<n>m` or `<n>h` (`1m`, `5m`, `1h`), or seconds that make ' +
    'whole minutes (`300`); 1 minute to 1 day. Default: 1m, or the smallest whole number of minutes that keeps ' +
    `the answer within ${MAX_POINTS.toLocaleString('en')} points.`,
});

export const WindowQuery = {
  from: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'ISO 8601, or epoch ms. Default: 24 h before to.',
    }),
  ),
  to: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'ISO 8601, or epoch ms (excluded). Default: now.',
    }),
  ),
};

export interface TimeWindow {
  from: number;
  to: number;
}

/** A series' window cut into steps; `start` is `from` rounded down to a step, so points are stable over time. */
export interface SteppedWindow extends TimeWindow {
  stepMs: number;
  start: number;
  points: number;
}

function sane(field: string, value: string | undefined): number | undefined {
  const time = instant(field, value);
  if (time !== undefined && (time < 0 || time > LAST_INSTANT)) {
    throw badRequest(`Invalid query string: "${field}" must lie between 1970 and the year 9999.`, [
      { field, message: 'must lie between 1970 and the year 9999' },
    ]);
  }
  return time;
}

/** `from` and `to` (to excluded), by default the last 24 hours; from must come before to. */
export function timeWindow(query: { from?: string; to?: string }, now: number): TimeWindow {
  const to = sane('to', query.to) ?? now;
  const from = sane('from', query.from) ?? to - DAY_MS;
  if (from >= to) {
    throw badRequest('Invalid query string: "from" must come before "to".', [
      { field: 'from', message: 'must come before to' },
    ]);
  }
  return { from, to };
}

const STEP_UNIT_MS: Record<string, number> = { '': 1_000, m: MINUTE_MS, h: HOUR_MS };

function badStep(message: string) {
  return badRequest(`Invalid query string: "step" ${message}.`, [{ field: 'step', message }]);
}

export function parseStep(value: string): number {
  const match = /^(\d{1,9})(m|h)?$/.exec(value);
  if (match === null) throw badStep('must be whole minutes as 1m, 5m or 1h, or a number of seconds');
  const ms = Number(match[1]) * STEP_UNIT_MS[match[2] ?? '']!;
  if (ms % MINUTE_MS !== 0 || ms === 0) throw badStep('must be a whole number of minutes, at least 1');
  if (ms > MAX_STEP_MS) throw badStep('must be at most 1 day (1440m)');
  return ms;
}

const pointsOf = (window: TimeWindow, stepMs: number) =>
  Math.ceil((window.to - Math.floor(window.from / stepMs) * stepMs) / stepMs);

/**
 * The window of a series and its step, whole minutes each: at most MAX_POINTS points, else 400 naming the
 * step that would fit. Steps are aligned on the epoch, so two reads a minute apart share their points.
 */
export function steppedWindow(
  query: { from?: string; to?: string; step?: string },
  now: number,
): SteppedWindow {
  const window = timeWindow(query, now);
  const stepMs = query.step === undefined ? smallestStep(window) : parseStep(query.step);
  if (stepMs > MAX_STEP_MS || pointsOf(window, stepMs) > MAX_POINTS) throw tooLong(window, stepMs);
  return {
    ...window,
    stepMs,
    start: Math.floor(window.from / stepMs) * stepMs,
    points: pointsOf(window, stepMs),
  };
}

/** The smallest whole number of minutes that keeps the window within MAX_POINTS (past a day if need be). */
function smallestStep(window: TimeWindow): number {
  let stepMs = Math.max(1, Math.ceil((window.to - window.from) / MAX_POINTS / MINUTE_MS)) * MINUTE_MS;
  // Rounding `from` down to a step may add one point.
  while (pointsOf(window, stepMs) > MAX_POINTS) stepMs += MINUTE_MS;
  return stepMs;
}

function tooLong(window: TimeWindow, stepMs: number) {
  const needed = smallestStep(window) / MINUTE_MS;
  const points = `${MAX_POINTS.toLocaleString('en')} points`;
  return badRequest(
    needed * MINUTE_MS > MAX_STEP_MS
      ? `Invalid query string: from–to holds more than ${points} of a day each; ask for a shorter range.`
      : `Invalid query string: from–to at a step of ${stepMs / MINUTE_MS}m gives more than ${points}; ` +
          `ask for a step of at least ${needed}m, or a shorter range.`,
    [{ field: 'step', message: `at most ${MAX_POINTS} points` }],
  );
}
