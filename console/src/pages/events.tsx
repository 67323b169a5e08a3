import { usePage, PAGE_SIZE } from '../api/hooks';
import type { FleetEvent } from '../api/types';
import { ALERT_TYPE_NAMES, ALERT_TYPES } from '../api/vocabulary';
import { PageHeader } from '../layout';
import { replaceParams, useRoute } from '../router';
import { Badge } from '../ui/badge';
import { Empty, Loaded } from '../ui/states';
import { Pager, Table, type Column } from '../ui/table';
import { When } from '../ui/time';
import { LIVE_MS } from './fleet';

const columns: Column<FleetEvent>[] = [
  { header: 'When', cell: (event) => <When at={event.occurred_at} /> },
  {
    header: 'Type',
    cell: (event) => ALERT_TYPES[event.type as keyof typeof ALERT_TYPES]?.label ?? event.type,
  },
  { header: 'Node', cell: (event) => <a href={`#/nodes/${event.node.id}`}>{event.node.name}</a> },
  {
    header: 'Resource',
    cell: (event) =>
      event.resource.kind === 'node' ? 'node' : `${event.resource.kind} ${event.resource.name}`,
    secondary: true,
  },
  {
    header: 'Change',
    cell: (event) => (
      <>
        <span className="muted">{event.previous_state ?? '—'} →</span> <Badge state={event.current_state} />
      </>
    ),
  },
  { header: 'Organization', cell: (event) => event.organization.name, secondary: true },
];

/** A `datetime-local` value as the API's ISO time. */
export const isoOf = (local: string) => (local === '' ? undefined : new Date(local).toISOString());

export function EventsPage() {
  const route = useRoute();
  const page = Number(route.params.get('page') ?? 0);
  const type = route.params.get('type') ?? '';
  const from = route.params.get('from') ?? '';
  const until = route.params.get('until') ?? '';
  const events = usePage<FleetEvent>(
    '/api/v2/event',
    { type, start_date: isoOf(from), end_date: isoOf(until) },
    page,
    { refetchInterval: LIVE_MS },
  );
  return (
    <>
      <PageHeader title="Events" />
      <div className="filters" role="search">
        <label>
          <span>Type</span>
          <select
            value={type}
            onChange={(event) => replaceParams(route, { type: event.target.value, page: undefined })}
          >
            <option value="">Any</option>
            {ALERT_TYPE_NAMES.map((name) => (
              <option key={name} value={name}>
                {ALERT_TYPES[name].label}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>From</span>
          <input
            type="datetime-local"
            value={from}
            onChange={(event) => replaceParams(route, { from: event.target.value, page: undefined })}
          />
        </label>
        <label>
          <span>Until</span>
          <input
            type="datetime-local"
            value={until}
            onChange={(event) => replaceParams(route, { until: event.target.value, page: undefined })}
          />
        </label>
      </div>
      <Loaded query={events} what="events">
        {(data) =>
          data.total_count === 0 ? (
            <Empty>
              <p>
                No events
                {type || from || until ? ' match these filters' : ' yet: they appear as nodes report'}.
              </p>
            </Empty>
          ) : (
            <>
              <Table caption="Events" columns={columns} rows={data.results} />
              <Pager
                page={page}
                size={PAGE_SIZE}
                total={data.total_count}
                onPage={(next) => replaceParams(route, { page: next || undefined })}
              />
            </>
          )
        }
      </Loaded>
    </>
  );
}
