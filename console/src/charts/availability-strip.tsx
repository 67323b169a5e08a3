import { useState } from 'react';
import { Loaded } from '../ui/states';
import { rangeLabel, ChartsSection, useRangeQuery, type Range } from './range';
import './charts.css';

type State = 'NEW' | 'ALIVE' | 'UNREACHABLE';

interface Availability {
  from: string;
  to: string;
  known_from: string | null;
  known_to: string | null;
  uptime_percent: number | null;
  bands: { state: State; from: string; to: string }[];
}

const WIDTH = 1_000;
const timeFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });
const LABEL: Record<State, string> = { NEW: 'New', ALIVE: 'Alive', UNREACHABLE: 'Unreachable' };

function duration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
}

function Strip({ data }: { data: Availability }) {
  const start = Date.parse(data.from);
  const span = Date.parse(data.to) - start;
  const x = (at: string) => ((Date.parse(at) - start) / span) * WIDTH;
  return (
    <svg
      className="strip"
      viewBox={`0 0 ${WIDTH} 28`}
      preserveAspectRatio="none"
      aria-hidden="true"
      focusable="false"
    >
      <rect className="band-unknown" x={0} y={0} width={WIDTH} height={28} />
      {data.bands.map((band) => (
        <rect
          key={band.from}
          className={`band-${band.state.toLowerCase()}`}
          x={x(band.from)}
          y={0}
          width={Math.max(x(band.to) - x(band.from), 0.5)}
          height={28}
        />
      ))}
    </svg>
  );
}

function summary(data: Availability, range: Range): string {
  if (data.uptime_percent === null) return `Not watched in the ${rangeLabel(range)}.`;
  const outages = data.bands.filter((band) => band.state === 'UNREACHABLE');
  const down = outages.reduce((sum, band) => sum + Date.parse(band.to) - Date.parse(band.from), 0);
  return (
    `Uptime ${data.uptime_percent} % over the ${rangeLabel(range)}; ` +
    (outages.length === 0
      ? 'never unreachable.'
      : `unreachable ${outages.length} ${outages.length === 1 ? 'time' : 'times'}, ${duration(down)} in all.`)
  );
}

/** A node's availability: its states as coloured bands over 24 h or 7 d, its uptime, and the bands as a table. */
export function AvailabilityStrip({ nodeId }: { nodeId: string }) {
  const [range, setRange] = useState<Range>('24h');
  const availability = useRangeQuery<Availability>(`/api/v1/node/${nodeId}/availability`, range, {}, false);
  return (
    <ChartsSection
      id="availability-title"
      title="Availability"
      choiceLabel="Range of the availability"
      range={range}
      onRange={setRange}
    >
      <Loaded query={availability} what="the availability">
        {(data) => (
          <figure className="chart" aria-label="Availability">
            <p className="uptime">
              <span className="uptime-number">
                {data.uptime_percent === null ? '—' : `${data.uptime_percent} %`}
              </span>{' '}
              <span className="muted">uptime</span>
            </p>
            <Strip data={data} />
            <p className="strip-scale muted" aria-hidden="true">
              <span>{timeFormat.format(new Date(data.from))}</span>
              <span>now</span>
            </p>
            <ul className="chart-summary legend" aria-hidden="true">
              {(['ALIVE', 'UNREACHABLE', 'NEW'] as const).map((state) => (
                <li key={state}>
                  <span className={`swatch band-${state.toLowerCase()}`} /> {LABEL[state]}
                </li>
              ))}
              <li>
                <span className="swatch band-unknown" /> Not known
              </li>
            </ul>
            <figcaption className="availability-summary">{summary(data, range)}</figcaption>
            <details className="chart-data">
              <summary>Data</summary>
              <table>
                <caption className="visually-hidden">States over the {rangeLabel(range)}</caption>
                <thead>
                  <tr>
                    <th scope="col">State</th>
                    <th scope="col">From</th>
                    <th scope="col">To</th>
                  </tr>
                </thead>
                <tbody>
                  {data.bands.map((band) => (
                    <tr key={band.from}>
                      <th scope="row">{LABEL[band.state]}</th>
                      <td>
                        <time dateTime={band.from}>{timeFormat.format(new Date(band.from))}</time>
                      </td>
                      <td>
                        <time dateTime={band.to}>{timeFormat.format(new Date(band.to))}</time>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </details>
          </figure>
        )}
      </Loaded>
    </ChartsSection>
  );
}
