import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './charts.css';
import { usePalette, type Palette } from './palette';

export interface Series {
  label: string;
  /** One of the theme's colours. */
  color: keyof Palette;
  /** One per time; null where nothing is known (drawn as a gap). */
  values: (number | null)[];
  dashed?: boolean;
  /** Each point as a dot too: for series whose points are few and far apart. */
  dots?: boolean;
}

/** How a chart writes its values: on its axis, in its summary and in its table. */
export interface ValueFormat {
  (value: number): string;
  /** Counts: the axis never marks a fraction. */
  whole?: boolean;
}

export const counts: ValueFormat = Object.assign((value: number) => value.toLocaleString('en'), {
  whole: true,
});

const WHOLE_STEPS = [1, 10, 100, 1_000, 10_000, 100_000].flatMap((ten) =>
  [1, 2, 5].map((first) => first * ten),
);

const HEIGHT = 200;
const timeFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

function options(
  width: number,
  series: readonly Series[],
  palette: Palette,
  format: ValueFormat,
): uPlot.Options {
  const axis = {
    stroke: palette.inkSoft,
    grid: { stroke: palette.line, width: 1 },
    ticks: { stroke: palette.line, width: 1 },
  };
  return {
    width,
    height: HEIGHT,
    scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
    axes: [
      axis,
      {
        ...axis,
        size: 64,
        values: (_u, ticks) => ticks.map(format),
        ...(format.whole ? { incrs: WHOLE_STEPS } : {}),
      },
    ],
    cursor: { drag: { x: false, y: false } },
    legend: { live: true },
    series: [
      {},
      ...series.map((one) => ({
        label: one.label,
        stroke: palette[one.color],
        width: 2,
        ...(one.dashed ? { dash: [6, 4] } : {}),
        ...(one.dots ? { points: { show: true, size: 5, fill: palette[one.color] } } : {}),
      })),
    ],
  };
}

/**
 * A line chart over time, drawn by uPlot on a canvas in the theme's colours, as wide as its container. The
 * canvas says nothing to assistive technology: ChartFigure gives the same data as text and a table.
 */
export function TimeSeries({
  times,
  series,
  format,
}: {
  /** ISO 8601. */
  times: readonly string[];
  series: readonly Series[];
  format: ValueFormat;
}) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const palette = usePalette();
  const data: uPlot.AlignedData = [
    times.map((at) => Date.parse(at) / 1_000),
    ...series.map((one) => one.values),
  ];
  const shape = series.map((one) => `${one.label}:${one.color}:${one.dashed}:${one.dots}`).join();

  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const made = new uPlot(options(element.clientWidth, series, palette, format), data, element);
    chart.current = made;
    const resize = new ResizeObserver(() => {
      if (element.clientWidth !== made.width) made.setSize({ width: element.clientWidth, height: HEIGHT });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      made.destroy();
      chart.current = null;
    };
    // The chart is made again only when its series or colours change; new data goes through setData.
  }, [shape, palette, format]);

  useEffect(() => {
    chart.current?.setData(data);
  });

  return <div className="chart-canvas" ref={box} aria-hidden="true" />;
}

const lastKnown = (values: readonly (number | null)[]) => values.findLast((value) => value !== null) ?? null;
const highest = (values: readonly (number | null)[]) =>
  values.reduce<number | null>(
    (top, value) => (value !== null && (top === null || value > top) ? value : top),
    null,
  );

/**
 * A chart with its data in words: a summary of each series (its latest value and its highest) and, under
 * "Data", every point as a table, for screen readers and for anyone who wants the numbers.
 */
export function ChartFigure({
  title,
  times,
  series,
  format = counts,
  caption,
}: {
  title: string;
  times: readonly string[];
  series: readonly Series[];
  format?: ValueFormat;
  caption: string;
}) {
  const known = times.map((_, i) => series.some((one) => one.values[i] !== null));
  return (
    <figure className="chart" aria-label={title}>
      <figcaption>
        <strong>{title}</strong> <span className="muted">{caption}</span>
      </figcaption>
      <TimeSeries times={times} series={series} format={format} />
      <ul className="chart-summary" aria-label={`${title}: summary`}>
        {series.map((one) => {
          const last = lastKnown(one.values);
          return (
            <li key={one.label} data-series={one.label}>
              {one.label}: {last === null ? 'no data' : `${format(last)} now`}
              {last === null ? '' : `, highest ${format(highest(one.values)!)}`}
            </li>
          );
        })}
      </ul>
      <details className="chart-data">
        <summary>Data</summary>
        <table>
          <caption className="visually-hidden">{title}</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              {series.map((one) => (
                <th scope="col" key={one.label}>
                  {one.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {times.map((at, i) =>
              known[i] ? (
                <tr key={at}>
                  <th scope="row">
                    <time dateTime={at}>{timeFormat.format(new Date(at))}</time>
                  </th>
                  {series.map((one) => (
                    <td key={one.label}>{one.values[i] === null ? '—' : format(one.values[i]!)}</td>
                  ))}
                </tr>
              ) : null,
            )}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
