import { useState } from 'react';
import { Loaded } from '../ui/states';
import { rangeLabel, ChartsSection, useRangeQuery, type Range } from './range';
import { ChartFigure, type ValueFormat } from './time-series';

interface StatsPoint {
  at: string;
  pending: number;
  delivered: number;
  failed: number;
  held: number;
  expired: number;
  suppressed: number;
  cancelled: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
}

interface Stats {
  step_seconds: number;
  latency_capped: boolean;
  points: StatsPoint[];
}

const PER: Record<Range, string> = { '24h': 'per minute', '7d': 'per 10 minutes' };

const milliseconds: ValueFormat = (ms) =>
  ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toLocaleString('en')} s`;

/**
 * The Notifications page's pictures: how many by status, and how long deliveries took (p50, p95); with
 * `everyone`, of the organization's notifications (scope=org), as the list below shows them.
 */
export function NotificationCharts({ everyone = false }: { everyone?: boolean }) {
  const [range, setRange] = useState<Range>('24h');
  const stats = useRangeQuery<Stats>('/api/v2/notification/stats', range, {
    scope: everyone ? 'org' : undefined,
  });
  return (
    <ChartsSection
      id="notification-charts-title"
      title="Over time"
      choiceLabel="Range of the notification charts"
      range={range}
      onRange={setRange}
    >
      <Loaded query={stats} what="notification statistics">
        {({ points, latency_capped }) => {
          const times = points.map((point) => point.at);
          const of = (name: keyof Omit<StatsPoint, 'at'>) => points.map((point) => point[name]);
          return (
            <div className="chart-grid">
              <ChartFigure
                title="Notifications by status"
                caption={`${PER[range]}, ${rangeLabel(range)}, by their status now`}
                times={times}
                series={[
                  { label: 'Delivered', color: 'good', values: of('delivered') },
                  { label: 'Failed', color: 'bad', values: of('failed') },
                  { label: 'Pending', color: 'info', values: of('pending') },
                  { label: 'Held', color: 'warn', values: of('held') },
                  { label: 'Suppressed', color: 'quiet', values: of('suppressed'), dashed: true },
                  { label: 'Expired', color: 'inkSoft', values: of('expired'), dashed: true },
                ]}
              />
              <ChartFigure
                title="Delivery latency"
                caption={
                  `from the event to the first 2xx answer, ${rangeLabel(range)}` +
                  (latency_capped ? '; only the oldest 100,000 deliveries are counted' : '')
                }
                format={milliseconds}
                times={times}
                series={[
                  { label: 'p50', color: 'accent', values: of('latency_p50_ms'), dots: true },
                  { label: 'p95', color: 'warn', values: of('latency_p95_ms'), dots: true },
                ]}
              />
            </div>
          );
        }}
      </Loaded>
    </ChartsSection>
  );
}
