import { useOne, usePage } from '../api/hooks';
import type { Attempt, Notification } from '../api/types';
import { ALERT_TYPE_OPTIONS } from '../api/vocabulary';
import { NotificationCharts } from '../charts/notification-charts';
import { PageHeader } from '../layout';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { OrganizationLink, Subject } from '../ui/context-links';
import { Filters, isoOf, SelectFilter, TimeFilter, useFilter } from '../ui/filters';
import { PagedList, usePageParam } from '../ui/list';
import { Empty, Loaded } from '../ui/states';
import type { Column } from '../ui/table';
import { exactTime, When } from '../ui/time';
import { LIVE_MS } from './fleet';

const STATUSES = ['pending', 'delivered', 'failed', 'held', 'expired', 'suppressed', 'cancelled'];

const reasonText = (reason: string | null) => reason?.replaceAll('_', ' ') ?? '';

function columnsFor(everyone: boolean): Column<Notification>[] {
  return [
    { header: 'When', cell: (item) => <When at={item.created_at} /> },
    { header: 'Status', cell: (item) => <Badge state={item.status} /> },
    { header: 'What', cell: (item) => <a href={`#/notifications/${item.id}`}>{item.payload.message}</a> },
    { header: 'Node', cell: (item) => <Subject node={item.node} resource={item.resource} /> },
    {
      header: 'Organization',
      cell: (item) => <OrganizationLink organization={item.organization} />,
      secondary: true,
    },
    { header: 'Alert', cell: (item) => item.alert.name, secondary: true },
    ...(everyone
      ? [{ header: 'Owner', cell: (item: Notification) => item.owner.name, secondary: true }]
      : []),
    { header: 'Channel', cell: (item) => item.channel_type.toLowerCase(), secondary: true },
    { header: 'Reason', cell: (item) => reasonText(item.reason), secondary: true },
  ];
}

/** Admins and Operators may list everyone's notifications in their organizations (scope=org), kept in the URL. */
export function EveryonesSwitch({ on, onChange }: { on: boolean; onChange: (on: boolean) => void }) {
  return (
    <label className="switch">
      <input
        type="checkbox"
        role="switch"
        checked={on}
        onChange={(event) => onChange(event.target.checked)}
      />
      <span>Everyone's</span>
    </label>
  );
}

export function NotificationsPage() {
  const { canWrite } = useSession();
  const [page] = usePageParam();
  const [status] = useFilter('status');
  const [type] = useFilter('type');
  const [from] = useFilter('from');
  const [scope, setScope] = useFilter('scope');
  const everyone = canWrite && scope === 'org';
  const list = usePage<Notification>(
    '/api/v2/notification',
    { scope: everyone ? 'org' : undefined, status, type, start_date: isoOf(from) },
    page,
    {
      refetchInterval: LIVE_MS,
    },
  );
  const filtered = status !== '' || type !== '' || from !== '';
  const columns = columnsFor(everyone);
  return (
    <>
      <PageHeader title="Notifications" />
      <NotificationCharts everyone={everyone} />
      <Filters>
        {canWrite ? <EveryonesSwitch on={everyone} onChange={(on) => setScope(on ? 'org' : '')} /> : null}
        <SelectFilter label="Status" param="status" options={STATUSES} />
        <SelectFilter label="Type" param="type" options={ALERT_TYPE_OPTIONS} />
        <TimeFilter label="Since" param="from" />
      </Filters>
      <PagedList
        query={list}
        what="notifications"
        columns={columns}
        empty={
          <p>
            {filtered
              ? 'No notifications match these filters.'
              : everyone
                ? 'No notifications in your organizations yet.'
                : 'No notifications yet: they appear when an alert fires.'}
          </p>
        }
      />
    </>
  );
}

export function NotificationPage({ id }: { id: string }) {
  const { me } = useSession();
  const item = useOne<Notification>(`/api/v1/notification/${id}`, { refetchInterval: LIVE_MS });
  return (
    <Loaded query={item} what="the notification">
      {(data) => (
        <>
          <p className="crumbs">
            <a href="#/notifications">Notifications</a> /
          </p>
          <PageHeader title={data.payload.message} />
          <dl className="facts">
            <div>
              <dt>Status</dt>
              <dd>
                <Badge state={data.status} />{' '}
                {data.reason ? <span className="muted">({reasonText(data.reason)})</span> : null}
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
              <dt>Occurred</dt>
              <dd>{exactTime(data.occurred_at)}</dd>
            </div>
            <div>
              <dt>Node</dt>
              <dd>
                <Subject node={data.node} resource={data.resource} />
              </dd>
            </div>
            <div>
              <dt>Organization</dt>
              <dd>
                <OrganizationLink organization={data.organization} />
              </dd>
            </div>
          </dl>
          <section aria-labelledby="deliveries-title">
            <h2 id="deliveries-title">Deliveries</h2>
            {data.deliveries === undefined || data.deliveries.length === 0 ? (
              <Empty>
                <p>{data.channel_type === 'EMAIL' ? 'Sent by e-mail: no deliveries.' : 'No delivery yet.'}</p>
              </Empty>
            ) : (
              data.deliveries.map((delivery) => (
                <div key={delivery.id} className="delivery">
                  <p>
                    <Badge state={delivery.status} />{' '}
                    {/* The log is its owner's: another user's webhook or channel is not the reader's to open. */}
                    {data.owner.id === me?.id ? (
                      <a
                        href={`#/${data.channel_type === 'WEBHOOK' ? 'webhooks' : 'channels'}/${delivery.webhook_id}?delivery=${delivery.id}`}
                      >
                        In the {data.channel_type === 'WEBHOOK' ? 'webhook' : 'channel'}'s delivery log
                      </a>
                    ) : null}
                  </p>
                  <Attempts attempts={delivery.attempts} />
                </div>
              ))
            )}
          </section>
          <section aria-labelledby="payload-title">
            <h2 id="payload-title">Payload</h2>
            <pre className="payload" tabIndex={0}>
              {JSON.stringify(data.payload, null, 2)}
            </pre>
          </section>
        </>
      )}
    </Loaded>
  );
}

export function Attempts({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return <p className="muted">No attempt yet.</p>;
  return (
    <ol className="attempts">
      {attempts.map((attempt, index) => (
        <li key={`${attempt.at}-${index}`}>
          <span>
            <When at={attempt.at} /> —{' '}
            {attempt.status_code === null ? 'no answer' : `HTTP ${attempt.status_code}`}
            {attempt.duration_ms === null ? '' : ` in ${attempt.duration_ms} ms`}
          </span>
          {attempt.error ? <span className="problem-inline">{attempt.error}</span> : null}
          {attempt.response ? (
            <pre className="response" tabIndex={0}>
              {attempt.response}
            </pre>
          ) : null}
        </li>
      ))}
    </ol>
  );
}
