import { useOne, usePage } from '../api/hooks';
import type { FleetEvent, FleetNode, Service, Tunnel } from '../api/types';
import { AvailabilityStrip } from '../charts/availability-strip';
import { PageHeader } from '../layout';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { Empty, Loaded } from '../ui/states';
import { Table } from '../ui/table';
import { At, When } from '../ui/time';
import { LIVE_MS } from './fleet';
import { DeleteNode, EditNode, NewToken } from './node-forms';

function Facts({ node }: { node: FleetNode }) {
  const version = node.status.node.info.version.software_version;
  return (
    <dl className="facts">
      <div>
        <dt>State</dt>
        <dd>
          <Badge state={node.node_state} /> since <When at={node.state_since} />
        </dd>
      </div>
      <div>
        <dt>Last seen</dt>
        <dd>
          <When at={node.last_seen_at} empty="never" />
        </dd>
      </div>
      <div>
        <dt>Organization</dt>
        <dd>{node.organization.name}</dd>
      </div>
      <div>
        <dt>Addresses</dt>
        <dd>
          {node.status.node.addresses.length === 0
            ? '—'
            : node.status.node.addresses.map((address) => (
                <span key={address.address} className="address">
                  {address.address} <span className="muted">({address.type})</span>
                </span>
              ))}
        </dd>
      </div>
      <div>
        <dt>Version</dt>
        <dd>{version ?? '—'}</dd>
      </div>
      <div>
        <dt>Certificate expires</dt>
        <dd>
          <When at={node.certificate?.not_after} empty="no certificate reported" />
        </dd>
      </div>
      <div>
        <dt>Headless expiry</dt>
        <dd>
          <When at={node.headless_expires_at} empty="not running headless" />
        </dd>
      </div>
      <div>
        <dt>Upgrade</dt>
        <dd>{node.upgrade?.status ?? '—'}</dd>
      </div>
      <div>
        <dt>Serial number</dt>
        <dd>{node.hardware_serial_number ?? '—'}</dd>
      </div>
    </dl>
  );
}

/** A state as it is now, or, while the node is silent, unknown with its last known value greyed. */
function KnownState({ state, stale }: { state: string; stale: boolean }) {
  if (!stale) return <Badge state={state} />;
  return (
    <span className="stale">
      <Badge state="UNKNOWN" /> last known {state}
    </span>
  );
}

function Resources({ nodeId, node }: { nodeId: string; node: FleetNode }) {
  const tunnels = usePage<Tunnel>('/api/v2/tunnel', { node_id: nodeId }, 0, {
    refetchInterval: LIVE_MS,
    size: 100,
  });
  const services = usePage<Service>('/api/v2/service', { node_id: nodeId }, 0, {
    refetchInterval: LIVE_MS,
    size: 100,
  });
  const { stale, as_of: asOf } = node.resource_states;
  return (
    <>
      {stale ? (
        <p className="stale-note" role="note">
          The node is unreachable: the states below are the last known ones, from its last report{' '}
          <When at={asOf} />, before the node went silent. What they are now is unknown.
        </p>
      ) : null}
      <div className="two-columns">
        <section aria-labelledby="tunnels-title">
          <h2 id="tunnels-title">Tunnels</h2>
          <Loaded query={tunnels} what="tunnels">
            {(data) =>
              data.total_count === 0 ? (
                <Empty>
                  <p>No tunnels reported.</p>
                </Empty>
              ) : (
                <Table
                  caption="Tunnels"
                  rows={data.results}
                  columns={[
                    { header: 'Name', cell: (tunnel) => tunnel.name },
                    {
                      header: 'State',
                      cell: (tunnel) => <KnownState state={tunnel.state} stale={tunnel.stale} />,
                    },
                    { header: 'Since', cell: (tunnel) => <When at={tunnel.state_since} /> },
                  ]}
                />
              )
            }
          </Loaded>
        </section>
        <section aria-labelledby="services-title">
          <h2 id="services-title">Services</h2>
          <Loaded query={services} what="services">
            {(data) =>
              data.total_count === 0 ? (
                <Empty>
                  <p>No services reported.</p>
                </Empty>
              ) : (
                <Table
                  caption="Services"
                  rows={data.results}
                  columns={[
                    { header: 'Name', cell: (service) => service.name },
                    {
                      header: 'Status',
                      cell: (service) => <KnownState state={service.status} stale={service.stale} />,
                    },
                    { header: 'Since', cell: (service) => <When at={service.state_since} /> },
                  ]}
                />
              )
            }
          </Loaded>
        </section>
      </div>
    </>
  );
}

function Timeline({ nodeId }: { nodeId: string }) {
  const events = usePage<FleetEvent>('/api/v2/event', { node_id: nodeId }, 0, {
    refetchInterval: LIVE_MS,
    size: 50,
  });
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">Events</h2>
      <Loaded query={events} what="events">
        {(data) =>
          data.total_count === 0 ? (
            <Empty>
              <p>Nothing has happened to this node yet.</p>
            </Empty>
          ) : (
            <ol className="timeline">
              {data.results.map((event) => (
                <li key={event.id}>
                  <At at={event.occurred_at} />
                  <span>
                    {event.resource.kind === 'node'
                      ? 'Node'
                      : `${event.resource.kind} ${event.resource.name}`}
                    : {event.previous_state ?? '—'} → <Badge state={event.current_state} />
                  </span>
                </li>
              ))}
            </ol>
          )
        }
      </Loaded>
    </section>
  );
}

export function NodePage({ id }: { id: string }) {
  const node = useOne<FleetNode>(`/api/v1/node/${id}`, { refetchInterval: LIVE_MS });
  const { canWrite } = useSession();
  return (
    <Loaded query={node} what="the node">
      {(data) => (
        <>
          <p className="crumbs">
            <a href="#/fleet">Fleet</a> /
          </p>
          <PageHeader title={data.name}>
            {canWrite ? (
              <>
                <EditNode node={data} />
                <NewToken node={data} />
                <DeleteNode node={data} />
              </>
            ) : undefined}
          </PageHeader>
          <Facts node={data} />
          <AvailabilityStrip nodeId={id} />
          <Resources nodeId={id} node={data} />
          <Timeline nodeId={id} />
        </>
      )}
    </Loaded>
  );
}
