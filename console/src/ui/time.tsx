const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1_000],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const absolute = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'medium' });

/** "3 minutes ago", "in 2 days". */
export function fromNow(iso: string, now = Date.now()): string {
  const difference = new Date(iso).getTime() - now;
  for (const [unit, size] of units) {
    if (Math.abs(difference) >= size || unit === 'second') {
      return relative.format(Math.round(difference / size), unit);
    }
  }
  return '';
}

/** A time shown from now, with the exact time on hover and for assistive technology. */
export function When({ at, empty = '—' }: { at: string | null | undefined; empty?: string }) {
  if (at === null || at === undefined) return <span className="muted">{empty}</span>;
  return (
    <time dateTime={at} title={absolute.format(new Date(at))}>
      {fromNow(at)}
    </time>
  );
}

/** A time shown exactly, for timelines where many things happen within a minute. */
export function At({ at }: { at: string }) {
  return (
    <time dateTime={at} title={fromNow(at)}>
      {absolute.format(new Date(at))}
    </time>
  );
}

export const exactTime = (iso: string) => absolute.format(new Date(iso));
