import { useOne, usePage, PAGE_SIZE } from '../api/hooks';
import type { Incident, IncidentDetail, IncidentMember, IncidentMessage } from '../api/types';
import { labelOfType } from '../api/vocabulary';
import { PageHeader } from '../layout';
import { href } from '../router';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { NodeLink, OrganizationLink } from '../ui/context-links';
import { Filters, SelectFilter, useFilter } from '../ui/filters';
import { PagedList, usePageParam } from '../ui/list';
import { Empty, Loaded } from '../ui/states';
import { Pager, Table, type Column } from '../ui/table';
import { exactTime, When } from '../ui/time';
import { EveryonesSwitch } from './notifications';
import { LIVE_MS } from './fleet';

// Incidents (docs/decisions/0008-incidents.md): an alert's open trouble for one organization or node, its
// notifications grouped into the messages it sent. Their messages link here: `#/incidents/{id}`.

const STATUSES = ['firing', 'resolved'] as const;

/** What an incident is about: its node (group_by node), else its organization. */
const whereOf = (incident: Incident) => incident.node?.name ?? incident.organization.name;

const incidentPath = (id: string) => `/incidents/${id}`;

function columnsFor(everyone: boolean): Column<Incident>[] {
  return [
    { header: 'Status', cell: (item) => <Badge state={item.status} /> },
    {
      header: 'Incident',
      cell: (item) => (
        <>
          <a className="name" href={href(incidentPath(item.id))}>
            {whereOf(item)}
          </a>
          {item.node === null ? null : <span className="muted"> · {item.organization.name}</span>}
        </>
      ),
    },
    { header: 'Alert', cell: (item) => item.alert.name, secondary: true },
    ...(everyone ? [{ header: 'Owner', cell: (item: Incident) => item.owner.name, secondary: true }] : []),
    { header: 'Type', cell: (item) => labelOfType(item.type), secondary: true },
    { header: 'Firing', cell: (item) => item.counts.firing.toLocaleString('en') },
    { header: 'Members', cell: (item) => item.counts.members.toLocaleString('en'), secondary: true },
    { header: 'Flaps', cell: (item) => item.counts.flaps.toLocaleString('en'), secondary: true },
    {
      header: 'Behind unreachable',
      cell: (item) => item.counts.behind_unreachable.toLocaleString('en'),
      secondary: true,
    },
    { header: 'Opened', cell: (item) => <When at={item.opened_at} /> },
    { header: 'Last message', cell: (item) => <When at={item.last_message_at} />, secondary: true },
  ];
}

export function IncidentsPage() {
  const { canWrite } = useSession();
  const [page] = usePageParam();
  const [status] = useFilter('status');
  const [scope, setScope] = useFilter('scope');
  const everyone = canWrite && scope === 'org';
  // Firing first, then newest first: the API's own order.
  const list = usePage<Incident>('/api/v2/incident', { scope: everyone ? 'org' : undefined, status }, page, {
    refetchInterval: LIVE_MS,
  });
  return (
    <>
      <PageHeader title="Incidents" />
      <p className="lede">
        A grouped alert's notifications, one incident per organization or node in trouble: open (firing) ones
        first. Each message an incident sent tells what changed since the one before.
      </p>
      <Filters>
        {canWrite ? <EveryonesSwitch on={everyone} onChange={(on) => setScope(on ? 'org' : '')} /> : null}
        <SelectFilter label="Status" param="status" options={STATUSES} />
      </Filters>
      <PagedList
        query={list}
        what="incidents"
        columns={columnsFor(everyone)}
        empty={
          <p>
            {status === 'firing'
              ? 'No incident is open.'
              : status === 'resolved'
                ? 'No incident has resolved yet.'
                : everyone
                  ? 'No incidents in your organizations yet.'
                  : 'No incidents yet: a grouped alert opens one when its first notification fires.'}
          </p>
        }
      />
    </>
  );
}

/** The incident in numbers, each with its label. */
function Tallies({ incident }: { incident: Incident }) {
  const tallies = [
    ['Firing', incident.counts.firing, incident.counts.firing > 0 ? 'bad' : 'quiet'],
    ['Members', incident.counts.members, 'quiet'],
    ['Flaps', incident.counts.flaps, incident.counts.flaps > 0 ? 'warn' : 'quiet'],
    ['Behind unreachable', incident.counts.behind_unreachable, 'quiet'],
  ] as const;
  return (
    <dl className="tallies" aria-label="The incident in numbers">
      {tallies.map(([label, value, tone]) => (
        <div key={label} className={`tally tally-${tone}`}>
          <dt>{label}</dt>
          <dd>{value.toLocaleString('en')}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A member's node, linking to its page (unless retention removed what named it). */
function MemberSubject({ member }: { member: IncidentMember }) {
  const node =
    member.node.id === '' ? <span>{member.node.name || member.key}</span> : <NodeLink node={member.node} />;
  return (
    <>
      <span className="name">{node}</span>
      {member.resource.kind === 'node' ? null : (
        <span className="muted"> · {`${member.resource.kind} ${member.resource.name}`}</span>
      )}
    </>
  );
}

const memberColumns: Column<IncidentMember & { id: string }>[] = [
  { header: 'Member', cell: (member) => <MemberSubject member={member} /> },
  {
    header: 'State',
    cell: (member) => (
      <>
        {/* What it was before gives way on a narrow screen: the state now is what matters. */}
        <span className="muted secondary">{member.previous_state ?? '—'} → </span>
        <Badge state={member.current_state} />
      </>
    ),
  },
  { header: 'Since', cell: (member) => <When at={member.since} /> },
  {
    header: 'Change',
    cell: (member) =>
      member.change === null ? <span className="muted">—</span> : <Badge state={member.change} />,
  },
  { header: 'Flaps', cell: (member) => member.flaps.toLocaleString('en'), secondary: true },
  {
    header: 'Organization',
    cell: (member) =>
      member.organization.id === '' ? (
        member.organization.name
      ) : (
        <OrganizationLink organization={member.organization} />
      ),
    secondary: true,
  },
];

/** The members, paged by the API: new ones first, then recovered ones, then the rest by since. */
function Members({ id, incident }: { id: string; incident: Incident }) {
  const [page, setPage] = usePageParam();
  const members = usePage<IncidentMember>(`/api/v2/incident/${id}/members`, {}, page, {
    refetchInterval: LIVE_MS,
  });
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <Loaded query={members} what="members">
        {(data) =>
          data.total_count === 0 ? (
            <Empty>
              <p>
                {incident.status === 'resolved'
                  ? 'No members now: every one recovered, and the messages told it.'
                  : 'No members now.'}
              </p>
            </Empty>
          ) : (
            <>
              <Table
                caption="Members"
                columns={memberColumns}
                rows={data.results.map((member) => ({ ...member, id: member.key }))}
              />
              <Pager page={page} size={PAGE_SIZE} total={data.total_count} onPage={setPage} />
            </>
          )
        }
      </Loaded>
    </section>
  );
}

/** Why a message was sent, in a few words after the API's reason. */
const REASONS: Record<IncidentMessage['reason'], string> = {
  opened: 'the first member',
  updated: 'members changed',
  repeat: 'still firing, nothing new',
  resolved: 'every member recovered',
};

/** Where a message went, and whether each delivery reached it. */
function Deliveries({ message, ownerIsMe }: { message: IncidentMessage; ownerIsMe: boolean }) {
  if (message.deliveries.length === 0) {
    return (
      <span className="muted">
        {message.channel_type === 'EMAIL' ? 'by e-mail: no deliveries' : 'no delivery yet'}
      </span>
    );
  }
  const webhook = message.channel_type === 'WEBHOOK';
  return (
    <ul className="message-deliveries">
      {message.deliveries.map((delivery) => (
        <li key={delivery.id}>
          <Badge state={delivery.status} />{' '}
          <span className="muted">
            {delivery.attempts === 1 ? '1 attempt' : `${delivery.attempts} attempts`}
            {delivery.delivered_at === null ? null : (
              <>
                , delivered <When at={delivery.delivered_at} />
              </>
            )}
          </span>
          {/* The log is its owner's: another user's webhook or channel is not the reader's to open. */}
          {ownerIsMe ? (
            <>
              {' '}
              <a
                href={href(`/${webhook ? 'webhooks' : 'channels'}/${delivery.webhook_id}`, {
                  delivery: delivery.id,
                })}
              >
                In the {webhook ? 'webhook' : 'channel'}'s delivery log
                <span className="visually-hidden"> (message {message.sequence})</span>
              </a>
            </>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

function Messages({ incident }: { incident: IncidentDetail }) {
  const { me } = useSession();
  const ownerIsMe = incident.owner.id === me?.id;
  const columns: Column<IncidentMessage & { id: string }>[] = [
    // Its sequence and reason: "#2 updated", with what that means on a wider screen.
    {
      header: 'Message',
      cell: (message) => (
        <>
          <span className="name">
            #{message.sequence} {message.reason}
          </span>
          <span className="muted secondary">: {REASONS[message.reason]}</span>
        </>
      ),
    },
    { header: 'Made', cell: (message) => <When at={message.created_at} /> },
    { header: 'Status', cell: (message) => <Badge state={message.status} /> },
    { header: 'Channel', cell: (message) => message.channel_type.toLowerCase(), secondary: true },
    {
      header: 'Deliveries',
      cell: (message) => <Deliveries message={message} ownerIsMe={ownerIsMe} />,
      // The message's status says how its deliveries ended; each one is there on a wider screen.
      secondary: true,
    },
  ];
  return (
    <section aria-labelledby="messages-title">
      <h2 id="messages-title">Messages</h2>
      {incident.messages.length === 0 ? (
        <Empty>
          <p>No message yet.</p>
        </Empty>
      ) : (
        <Table
          caption="Messages"
          columns={columns}
          rows={incident.messages.map((message) => ({ ...message, id: message.notification_id }))}
        />
      )}
    </section>
  );
}

export function IncidentPage({ id }: { id: string }) {
  const { me } = useSession();
  const incident = useOne<IncidentDetail>(`/api/v1/incident/${id}`, { refetchInterval: LIVE_MS });
  return (
    <Loaded query={incident} what="the incident">
      {(data) => (
        <>
          <p className="crumbs">
            <a href="#/incidents">Incidents</a> /
          </p>
          <PageHeader title={`${data.alert.name}: ${whereOf(data)}`} />
          <dl className="facts">
            <div>
              <dt>Status</dt>
              <dd>
                <Badge state={data.status} />
              </dd>
            </div>
            <div>
              <dt>Alert</dt>
              <dd>
                {data.alert.name}
                {data.owner.id === me?.id ? null : <span className="muted"> ({data.owner.name}'s)</span>}
              </dd>
            </div>
            <div>
              <dt>Type</dt>
              <dd>{labelOfType(data.type)}</dd>
            </div>
            <div>
              <dt>Organization</dt>
              <dd>
                <OrganizationLink organization={data.organization} />
              </dd>
            </div>
            {data.node === null ? null : (
              <div>
                <dt>Node</dt>
                <dd>
                  <NodeLink node={data.node} />
                </dd>
              </div>
            )}
            <div>
              <dt>Opened</dt>
              <dd>{exactTime(data.opened_at)}</dd>
            </div>
            <div>
              <dt>Resolved</dt>
              <dd>
                {data.resolved_at === null ? (
                  <span className="muted">not yet</span>
                ) : (
                  exactTime(data.resolved_at)
                )}
              </dd>
            </div>
            <div>
              <dt>Last message</dt>
              <dd>
                <When at={data.last_message_at} />{' '}
                <span className="muted">
                  ({data.sequence === 1 ? '1 message' : `${data.sequence.toLocaleString('en')} messages`})
                </span>
              </dd>
            </div>
          </dl>
          <Tallies incident={data} />
          <Members id={id} incident={data} />
          <Messages incident={data} />
        </>
      )}
    </Loaded>
  );
}
