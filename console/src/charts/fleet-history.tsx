import { useState } from 'react';
import { Loaded } from '../ui/states';
import { rangeLabel, ChartsSection, useRangeQuery, type Range } from './range';
import { ChartFigure } from './time-series';

interface HistoryPoint {
  at: string;
  alive: number | null;
  unreachable: number | null;
  new: number | null;
  tunnels_unhealthy: number | null;
  tunnels_unknown: number | null;
  services_unhealthy: number | null;
  services_unknown: number | null;
}

interface History {
  step_seconds: number;
  points: HistoryPoint[];
}

const column = (points: HistoryPoint[], name: Exclude<keyof HistoryPoint, 'at'>) =>
  points.map((point) => point[name]);

/** The Fleet page's history: nodes by state, and tunnels and services not healthy, over 24 h or 7 d. */
export function FleetHistory({ orgId }: { orgId: string }) {
  const [range, setRange] = useState<Range>('24h');
  const history = useRangeQuery<History>('/api/v2/fleet/history', range, { org_id: orgId });
  const caption = `${rangeLabel(range)}; each point the worst minute of its step, gaps where nothing was recorded`;
  return (
    <ChartsSection
      id="fleet-history-title"
      title="History"
      choiceLabel="Range of the fleet's history"
      range={range}
      onRange={setRange}
    >
      <Loaded query={history} what="the fleet's history">
        {({ points }) => {
          const times = points.map((point) => point.at);
          return (
            <div className="chart-grid">
              <ChartFigure
                title="Nodes by state"
                caption={caption}
                times={times}
                series={[
                  { label: 'Alive', color: 'good', values: column(points, 'alive') },
                  { label: 'Unreachable', color: 'bad', values: column(points, 'unreachable') },
                  { label: 'New', color: 'info', values: column(points, 'new') },
                ]}
              />
              <ChartFigure
                title="Tunnels and services not healthy"
                caption={`${rangeLabel(range)}; unknown: their node is unreachable`}
                times={times}
                series={[
                  { label: 'Tunnels down', color: 'bad', values: column(points, 'tunnels_unhealthy') },
                  {
                    label: 'Services unhealthy',
                    color: 'warn',
                    values: column(points, 'services_unhealthy'),
                  },
                  {
                    label: 'Tunnels unknown',
                    color: 'quiet',
                    values: column(points, 'tunnels_unknown'),
                    dashed: true,
                  },
                  {
                    label: 'Services unknown',
                    color: 'info',
                    values: column(points, 'services_unknown'),
                    dashed: true,
                  },
                ]}
              />
            </div>
          );
        }}
      </Loaded>
    </ChartsSection>
  );
}
