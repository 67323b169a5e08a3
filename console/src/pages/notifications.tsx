import { useOne, usePage, PAGE_SIZE } from '../api/hooks';
import type { Notification, NotificationStatus } from '../api/types';
import { ALERT_TYPE_NAMES, ALERT_TYPES } from '../api/vocabulary';
import { PageHeader } from '../layout';
import { replaceParams, useRoute } from '../router';
import { Badge } from '../ui/badge';
import { Empty, Loaded } from '../ui/states';
import { Pager, Table, type Column } from '../ui/table';
import { exactTime, When } from '../ui/time';
import { isoOf } from './events';
import { LIVE_MS } from './fleet';

const STATUSES: NotificationStatus[] = ['pending', 'delivered', 'failed', 'held', 'expired', 'suppressed'];

const columns: Column<Notification>[] = [
  { header: 'When', cell: (item) => <When at={item.created_at} /> },
  { header: 'Status', cell: (item) => <Badge state={item.status} /> },
  { header: 'What', cell: (item) => <a href={`#/notifications/${item.id}`}>{item.payload.message}</a> },
  { header: 'Alert', cell: (item) => item.alert.name, secondary: true },
  { header: 'Channel', cell: (item) => item.channel_type.toLowerCase(), secondary: true },
  { header: 'Reason', cell: (item) => item.reason?.replaceAll('_', ' ') ?? '', secondary: true },
];

export function NotificationsPage() {
  const route = useRoute();
  const page = Number(route.params.get('page') ?? 0);
  const status = route.params.get('status') ?? '';
  const type = route.params.get('type') ?? '';
  const from = route.params.get('from') ?? '';
  const list = usePage<Notification>(
    '/api/v2/notification',
    { status, type, start_date: isoOf(from) },
    page,
    {
      refetchInterval: LIVE_MS,
    },
  );
  return (
    <>
      <PageHeader title="Notifications" />
      <div className="filters" role="search">
        <label>
          <span>Status</span>
          <select
            value={status}
            onChange={(event) => replaceParams(route, { status: event.target.value, page: undefined })}
          >
            <option value="">Any</option>
            {STATUSES.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
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
          <span>Since</span>
          <input
            type="datetime-local"
            value={from}
            onChange={(event) => replaceParams(route, { from: event.target.value, page: undefined })}
          />
        </label>
      </div>
      <Loaded query={list} what="notifications">
        {(data) =>
          data.total_count === 0 ? (
            <Empty>
              <p>
                No notifications
                {status || type || from ? ' match these filters' : ' yet: they appear when an alert fires'}.
              </p>
            </Empty>
          ) : (
            <>
              <Table caption="Notifications" columns={columns} rows={data.results} />
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

export function NotificationPage({ id }: { id: string }) {
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
                {data.reason ? <span className="muted">({data.reason.replaceAll('_', ' ')})</span> : null}
              </dd>
            </div>
            <div>
              <dt>Alert</dt>
              <dd>{data.alert.name}</dd>
            </div>
            <div>
              <dt>Occurred</dt>
              <dd>{exactTime(data.occurred_at)}</dd>
            </div>
            <div>
              <dt>Node</dt>
              <dd>
                <a href={`#/nodes/${data.payload.node.id}`}>{data.payload.node.name}</a>
              </dd>
            </div>
          </dl>
          <section aria-labelledby="deliveries-title">
            <h2 id="deliveries-title">Deliveries</h2>
            {data.deliveries === undefined || data.deliveries.length === 0 ? (
              <Empty>
                <p>
                  {data.channel_type === 'EMAIL'
                    ? 'Sent by e-mail: no webhook deliveries.'
                    : 'No delivery yet.'}
                </p>
              </Empty>
            ) : (
              data.deliveries.map((delivery) => (
                <div key={delivery.id} className="delivery">
                  <p>
                    <Badge state={delivery.status} />{' '}
                    <a href={`#/webhooks/${delivery.webhook_id}?delivery=${delivery.id}`}>
                      delivery {delivery.id}
                    </a>
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

export function Attempts({
  attempts,
}: {
  attempts: NonNullable<Notification['deliveries']>[number]['attempts'];
}) {
  if (attempts.length === 0) return <p className="muted">No attempt yet.</p>;
  return (
    <ol className="attempts">
      {attempts.map((attempt, index) => (
        <li key={`${attempt.at}-${index}`}>
          <When at={attempt.at} /> —{' '}
          {attempt.status_code === null ? 'no answer' : `HTTP ${attempt.status_code}`}
          {attempt.duration_ms === null ? '' : ` in ${attempt.duration_ms} ms`}
          {attempt.error ? <span className="problem-inline"> {attempt.error}</span> : null}
          {attempt.response ? <pre className="response">{attempt.response}</pre> : null}
        </li>
      ))}
    </ol>
  );
}
