import { useId } from 'react';
import { ApiError } from '../api/client';
import type { Recurrence, Silence, Weekday } from '../api/types';
import { Field } from '../ui/forms';
import { isoOf } from '../ui/filters';
import { At, exactTime } from '../ui/time';

export type Repeats = 'once' | 'daily' | 'weekly';

const DAYS: [Weekday, string, string][] = [
  ['MO', 'Monday', 'Mon'],
  ['TU', 'Tuesday', 'Tue'],
  ['WE', 'Wednesday', 'Wed'],
  ['TH', 'Thursday', 'Thu'],
  ['FR', 'Friday', 'Fri'],
  ['SA', 'Saturday', 'Sat'],
  ['SU', 'Sunday', 'Sun'],
];

const BROWSER_TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

export const RECURRENCE_FIELDS = [
  'recurrence.frequency',
  'recurrence.days',
  'recurrence.start',
  'recurrence.duration_minutes',
  'recurrence.timezone',
  'until',
];

/** The form's schedule fields of a recurring window: its days (weekly), time of day, length, zone and end. */
export function RecurrenceFields({ repeats, error }: { repeats: 'daily' | 'weekly'; error: unknown }) {
  const zones = useId();
  const daysProblem = error instanceof ApiError ? error.about('recurrence.days') : undefined;
  return (
    <>
      {repeats === 'weekly' ? (
        <fieldset>
          <legend>On these days</legend>
          <div className="checks">
            {DAYS.map(([day, name]) => (
              <label key={day} className="check">
                <input type="checkbox" name="days" value={day} />
                {name}
              </label>
            ))}
          </div>
          {daysProblem === undefined ? null : <p className="problem">days {daysProblem}</p>}
        </fieldset>
      ) : null}
      <div className="two-fields">
        <Field
          label="Opens at"
          error={error}
          fields={['recurrence.start']}
          hint="Local time in the time zone"
        >
          {(props) => <input {...props} name="start" type="time" required />}
        </Field>
        <Field label="For (minutes)" error={error} fields={['recurrence.duration_minutes']}>
          {(props) => (
            <input
              {...props}
              name="duration_minutes"
              type="number"
              min={1}
              max={10080}
              defaultValue={60}
              required
            />
          )}
        </Field>
      </div>
      <Field
        label="Time zone"
        error={error}
        fields={['recurrence.timezone']}
        hint="Its daylight-saving changes keep the local time"
      >
        {(props) => (
          <>
            <input
              {...props}
              name="timezone"
              list={zones}
              defaultValue={BROWSER_TIME_ZONE}
              required
              autoComplete="off"
            />
            <datalist id={zones}>
              {Intl.supportedValuesOf('timeZone').map((zone) => (
                <option key={zone} value={zone} />
              ))}
            </datalist>
          </>
        )}
      </Field>
      <Field label="Until (optional)" error={error} fields={['until']} hint="No occurrence starts after it">
        {(props) => <input {...props} name="until" type="datetime-local" />}
      </Field>
    </>
  );
}

/** The request's times: starts_at and ends_at once, else the recurrence and its until. */
export function timesBody(repeats: Repeats, form: HTMLFormElement, values: Record<string, string>) {
  if (repeats === 'once') {
    return { starts_at: isoOf(values.starts_at ?? ''), ends_at: isoOf(values.ends_at ?? '') };
  }
  const days = new FormData(form).getAll('days').map(String);
  return {
    recurrence: {
      frequency: repeats,
      // None ticked: left out, so that the service says what is missing.
      ...(repeats === 'weekly' && days.length > 0 ? { days } : {}),
      start: values.start ?? '',
      duration_minutes: Number(values.duration_minutes),
      timezone: values.timezone ?? '',
    },
    ...(values.until ? { until: isoOf(values.until) } : {}),
  };
}

function lasting(minutes: number): string {
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
}

/** A one-off window's start and end; a recurring one's schedule. */
export function When({ silence }: { silence: Silence }) {
  if (silence.recurrence !== null) return <>{scheduleText(silence.recurrence, silence.until)}</>;
  return (
    <>
      <At at={silence.starts_at} /> to {silence.ends_at === null ? 'never' : <At at={silence.ends_at} />}
    </>
  );
}

/** "Weekly on Mon, Wed at 02:30 for 2 h (Europe/Paris), until …". */
function scheduleText(schedule: Recurrence, until: string | null): string {
  const short = (day: Weekday) => DAYS.find(([code]) => code === day)?.[2] ?? day;
  const days = (schedule.days ?? []).map(short).join(', ');
  const when = schedule.frequency === 'daily' ? 'Daily' : `Weekly on ${days}`;
  const bound = until === null ? '' : `, until ${exactTime(until)}`;
  return `${when} at ${schedule.start} for ${lasting(schedule.duration_minutes)} (${schedule.timezone})${bound}`;
}

/** The occurrence open now, or the next one. */
export function NextOccurrence({ silence }: { silence: Silence }) {
  const next = silence.next_occurrence;
  if (next === null) return <span className="muted">None</span>;
  if (Date.parse(next.starts_at) <= Date.now()) {
    return (
      <>
        Open now, until <At at={next.ends_at} />
      </>
    );
  }
  return (
    <>
      <At at={next.starts_at} /> to <At at={next.ends_at} />
    </>
  );
}
