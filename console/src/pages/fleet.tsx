import { useEffect } from 'react';
import { usePage } from '../api/hooks';
import type { FleetNode, Incident, NodeState } from '../api/types';
import { FleetHistory } from '../charts/fleet-history';
import { PageHeader } from '../layout';
import { href } from '../router';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { Filters, SearchFilter, SelectFilter, useFilter } from '../ui/filters';
import { PagedList, usePageParam } from '../ui/list';
import { OrgOptions } from '../ui/orgs';
import { useSortParam } from '../ui/sorting';
import type { Column } from '../ui/table';
import { When } from '../ui/time';
import { BulkBar, selectColumn, useSelection } from './fleet-bulk';
import { RegisterNode } from './node-forms';

/** The fleet is read again this often: a node's change shows without a reload. */
export const LIVE_MS = 2_000;

const STATES: NodeState[] = ['ALIVE', 'UNREACHABLE', 'NEW'];

/** size 1: only the total is wanted. */
const total = (path: string, filters: Record<string, string>) =>
  usePage<unknown>(path, filters, 0, { refetchInterval: LIVE_MS, size: 1 });

function StateCounts() {
  const counts = [
    ...STATES.map((state) => ({
      key: state.toLowerCase(),
      label: state.toLowerCase(),
      query: total('/api/v2/node', { node_state: state }),
      link: href('/fleet', { state }),
    })),
    // The tunnels and services of UNREACHABLE nodes: their states now are unknown.
    ...(['tunnel', 'service'] as const).map((kind) => ({
      key: `unknown-${kind}`,
      label: `${kind}s unknown`,
      query: total(`/api/v2/${kind}`, { stale: 'true' }),
      link: href('/fleet', { state: 'UNREACHABLE' }),
    })),
  ];
  return (
    <ul className="counts" aria-label="Nodes by state, and tunnels and services whose state is unknown">
      {counts.map(({ key, label, query, link }) => (
        <li key={key} className={`count count-${key.startsWith('unknown') ? 'unknown' : key}`}>
          <a href={link}>
            <span className="count-number">{query.data?.total_count.toLocaleString('en') ?? '…'}</span>
            <span className="count-label">{label}</span>
          </a>
        </li>
      ))}
    </ul>
  );
}

/**
 * How many of the caller's incidents are open (their own, as the Incidents page lists them by default), as a
 * link to them. size 1: only the total is wanted.
 */
function OpenIncidents() {
  const open = usePage<Incident>('/api/v2/incident', { status: 'firing' }, 0, {
    refetchInterval: LIVE_MS,
    size: 1,
  });
  // No error note here: the Incidents page says what went wrong.
  if (open.isError) return null;
  const count = open.data?.total_count;
  const firing = count !== undefined && count > 0;
  return (
    <p className={firing ? 'incidents-open incidents-open-firing' : 'incidents-open'}>
      <a href={href('/incidents', { status: 'firing' })}>
        {count === undefined
          ? 'Open incidents…'
          : count === 0
            ? 'No incident open'
            : `${count.toLocaleString('en')} ${count === 1 ? 'incident' : 'incidents'} open`}
      </a>
    </p>
  );
}

function health(node: FleetNode, counts: Record<string, number>, good: string) {
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
  if (total === 0) return '—';
  const known = `${counts[good] ?? 0}/${total} ${good.toLowerCase()}`;
  if (!node.resource_states.stale) return known;
  // Never shown as current: the node went silent, and these are what it said before.
  return (
    <span className="stale" title="The node is unreachable: this is what it last reported.">
      unknown (last known {known})
    </span>
  );
}

const columns: Column<FleetNode>[] = [
  { header: 'State', sort: 'state', cell: (node) => <Badge state={node.node_state} /> },
  {
    header: 'Name',
    sort: 'name',
    cell: (node) => (
      <a className="name" href={`#/nodes/${node.id}`}>
        {node.name}
      </a>
    ),
  },
  { header: 'Organization', sort: 'organization', cell: (node) => node.organization.name, secondary: true },
  { header: 'Last seen', sort: 'last_seen', cell: (node) => <When at={node.last_seen_at} empty="never" /> },
  {
    header: 'Version',
    sort: 'version',
    cell: (node) => node.status.node.info.version.software_version ?? '—',
    secondary: true,
  },
  // Its addresses are on the node's page: every column here sorts, and a list of addresses has no order.
  {
    header: 'Tunnels',
    sort: 'tunnels',
    cell: (node) => health(node, node.tunnels, 'CONNECTED'),
    secondary: true,
  },
  {
    header: 'Services',
    sort: 'services',
    cell: (node) => health(node, node.services, 'HEALTHY'),
    secondary: true,
  },
];

export function FleetPage() {
  const { canWrite } = useSession();
  const [page] = usePageParam();
  const [state] = useFilter('state');
  const [org, setOrg] = useFilter('org');
  const [search] = useFilter('search');
  // Problems first unless a column's header says otherwise (docs/rules/alerts-and-fleet.md).
  const sorting = useSortParam('problems');
  const filters = { node_state: state, org_id: org, include_child: org === '' ? undefined : true, search };
  const nodes = usePage<FleetNode>('/api/v2/node', { ...filters, sort: sorting.sort }, page, {
    refetchInterval: LIVE_MS,
  });
  const selection = useSelection();

  useEffect(() => {
    if (
      nodes.isSuccess &&
      !nodes.isPlaceholderData &&
      !performance.getEntriesByName('fleet-first-page').length
    ) {
      performance.mark('fleet-first-page');
    }
  }, [nodes.isSuccess, nodes.isPlaceholderData]);

  return (
    <>
      <PageHeader title="Fleet">{canWrite ? <RegisterNode /> : null}</PageHeader>
      <StateCounts />
      <OpenIncidents />
      <FleetHistory orgId={org} />
      <Filters>
        <SearchFilter placeholder="Name or serial" />
        <SelectFilter label="State" param="state" options={STATES} />
        <label>
          <span>Organization</span>
          <select value={org} onChange={(event) => setOrg(event.target.value)}>
            <option value="">All I can see</option>
            <OrgOptions />
          </select>
        </label>
      </Filters>
      {canWrite ? (
        <BulkBar selection={selection} filters={filters} total={nodes.data?.total_count ?? 0} />
      ) : null}
      <PagedList
        query={nodes}
        what="nodes"
        columns={canWrite ? [selectColumn(selection), ...columns] : columns}
        sorting={sorting}
        empty={
          <p>
            {state || org || search
              ? 'No node matches these filters.'
              : 'No nodes yet. Register one, then start its agent with the token it gets.'}
          </p>
        }
      />
    </>
  );
}
