import { usePage } from '../api/hooks';
import type { FleetEvent } from '../api/types';
import { ALERT_TYPE_OPTIONS, labelOfType } from '../api/vocabulary';
import { PageHeader } from '../layout';
import { Badge } from '../ui/badge';
import { Filters, isoOf, SelectFilter, TimeFilter, useFilter } from '../ui/filters';
import { PagedList, usePageParam } from '../ui/list';
import type { Column } from '../ui/table';
import { When } from '../ui/time';
import { LIVE_MS } from './fleet';

const columns: Column<FleetEvent>[] = [
  { header: 'When', cell: (event) => <When at={event.occurred_at} /> },
  { header: 'Type', cell: (event) => labelOfType(event.type), secondary: true },
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

export function EventsPage() {
  const [page] = usePageParam();
  const [type] = useFilter('type');
  const [from] = useFilter('from');
  const [until] = useFilter('until');
  const events = usePage<FleetEvent>(
    '/api/v2/event',
    { type, start_date: isoOf(from), end_date: isoOf(until) },
    page,
    { refetchInterval: LIVE_MS },
  );
  const filtered = type !== '' || from !== '' || until !== '';
  return (
    <>
      <PageHeader title="Events" />
      <Filters>
        <SelectFilter label="Type" param="type" options={ALERT_TYPE_OPTIONS} />
        <TimeFilter label="From" param="from" />
        <TimeFilter label="Until" param="until" />
      </Filters>
      <PagedList
        query={events}
        what="events"
        columns={columns}
        empty={
          <p>{filtered ? 'No events match these filters.' : 'No events yet: they appear as nodes report.'}</p>
        }
      />
    </>
  );
}
