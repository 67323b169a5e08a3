import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, type ReactNode } from 'react';
import { api, query } from '../api/client';

export type Range = '24h' | '7d';

const HOUR_MS = 3_600_000;
export const RANGE_MS: Record<Range, number> = { '24h': 24 * HOUR_MS, '7d': 7 * 24 * HOUR_MS };
const LABEL: Record<Range, string> = { '24h': 'Last 24 hours', '7d': 'Last 7 days' };

/** The range's start, on a whole minute so that one minute's reads share their cache entry. */
export function rangeStart(range: Range, now = Date.now()): string {
  return new Date(Math.floor((now - RANGE_MS[range]) / 60_000) * 60_000).toISOString();
}

/** 24 h a minute a point (1,440); 7 d ten minutes a point (1,008). */
export const STEP: Record<Range, string> = { '24h': '1m', '7d': '10m' };
const REFRESH_MS = 60_000;

/**
 * A chart's data over the range ending now: `from` is computed at each read, so the window moves on with
 * every refresh while the cache entry stays the same (and the chart stays on screen meanwhile).
 */
export function useRangeQuery<T>(
  path: string,
  range: Range,
  params: Record<string, string | undefined> = {},
  stepped = true,
) {
  return useQuery({
    queryKey: [path, range, params],
    queryFn: () =>
      api<T>(
        'GET',
        `${path}${query({ ...params, from: rangeStart(range), ...(stepped ? { step: STEP[range] } : {}) })}`,
      ),
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  });
}

export const rangeLabel = (range: Range) => LABEL[range].toLowerCase();

/** The 24 h / 7 d choice of a chart. */
export function RangeChoice({
  value,
  onChange,
  label,
}: {
  value: Range;
  onChange: (range: Range) => void;
  label: string;
}) {
  const name = useId();
  return (
    <fieldset className="range-choice">
      <legend className="visually-hidden">{label}</legend>
      {(['24h', '7d'] as const).map((range) => (
        <label key={range}>
          <input
            type="radio"
            name={name}
            value={range}
            checked={value === range}
            onChange={() => onChange(range)}
          />
          <span>{LABEL[range]}</span>
        </label>
      ))}
    </fieldset>
  );
}

/** A section of charts: its heading, and the 24 h / 7 d choice its charts share. */
export function ChartsSection({
  id,
  title,
  choiceLabel,
  range,
  onRange,
  children,
}: {
  id: string;
  title: string;
  choiceLabel: string;
  range: Range;
  onRange: (range: Range) => void;
  children: ReactNode;
}) {
  return (
    <section className="charts" aria-labelledby={id}>
      <div className="charts-head">
        <h2 id={id}>{title}</h2>
        <RangeChoice value={range} onChange={onRange} label={choiceLabel} />
      </div>
      {children}
    </section>
  );
}
