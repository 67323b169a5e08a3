import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { useChange, useOne, usePage } from '../api/hooks';
import type { Delivery } from '../api/types';
import { replaceParams, useRoute } from '../router';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { OrganizationLink, Subject } from '../ui/context-links';
import { Dialog } from '../ui/dialog';
import { Field, FormError, formValues } from '../ui/forms';
import { Filters, isoOf, SelectFilter, useFilter } from '../ui/filters';
import { PagedList, usePageParam } from '../ui/list';
import { Loaded } from '../ui/states';
import type { Column } from '../ui/table';
import { When } from '../ui/time';
import { LIVE_MS } from './fleet';
import { Attempts } from './notifications';

const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'held', 'expired'];

function DeliveryDetail({ base, delivery }: { base: string; delivery: Delivery }) {
  const { canWrite } = useSession();
  const detail = useOne<Delivery>(`${base}/deliveries/${delivery.id}`);
  const retry = useChange(() => api<Delivery>('POST', `${base}/deliveries/${delivery.id}/retry`), [base]);
  return (
    <div className="delivery-detail">
      <Loaded query={detail} what="attempts">
        {(data) => <Attempts attempts={data.attempt_log ?? []} />}
      </Loaded>
      {canWrite && (delivery.status === 'failed' || delivery.status === 'expired') ? (
        <button
          type="button"
          className="small"
          onClick={() => retry.mutate(undefined)}
          disabled={retry.isPending}
        >
          Send again now
        </button>
      ) : null}
      {retry.isSuccess ? <span role="status"> Queued.</span> : null}
      <FormError error={retry.error} />
    </div>
  );
}

/** Everything sent to a webhook or channel since a time, sent again. */
export function Replay({ endpoint, base }: { endpoint: { name: string }; base: string }) {
  const [open, setOpen] = useState(false);
  const replay = useChange(
    (since: string | undefined) => api<{ queued: number }>('POST', `${base}/replay`, { since }),
    [base],
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    replay.mutate(isoOf(formValues(event.currentTarget).since ?? ''));
  };
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Replay
      </button>
      <Dialog
        title={`Replay to ${endpoint.name}`}
        open={open}
        onClose={() => {
          setOpen(false);
          replay.reset();
        }}
      >
        <form onSubmit={submit} noValidate>
          <p>
            Every notification sent here since the time below is sent again (a receiver that lost its data
            recovers it).
          </p>
          <Field label="Since" error={replay.error} fields={['since']}>
            {(props) => <input {...props} name="since" type="datetime-local" required />}
          </Field>
          <FormError error={replay.error} fields={['since']} />
          {replay.data === undefined ? null : <p role="status">{replay.data.queued} queued.</p>}
          <div className="form-actions">
            <button type="submit" className="primary" disabled={replay.isPending}>
              Replay
            </button>
          </div>
        </form>
      </Dialog>
    </>
  );
}

/** The delivery log of a webhook or a channel (`base`: its API path): every notification sent, and each request. */
export function DeliveryLog({ base }: { base: string }) {
  const route = useRoute();
  const [page] = usePageParam();
  const [status] = useFilter('status');
  const open = route.params.get('delivery') ?? '';
  const deliveries = usePage<Delivery>(`${base}/deliveries`, { status }, page, {
    refetchInterval: LIVE_MS,
  });
  const columns: Column<Delivery>[] = [
    {
      header: 'Created',
      cell: (delivery) => (
        <button
          type="button"
          className="link"
          aria-expanded={open === delivery.id}
          onClick={() => replaceParams(route, { delivery: open === delivery.id ? undefined : delivery.id })}
        >
          <When at={delivery.created_at} />
        </button>
      ),
    },
    { header: 'Status', cell: (delivery) => <Badge state={delivery.status} /> },
    { header: 'Node', cell: (delivery) => <Subject node={delivery.node} resource={delivery.resource} /> },
    {
      header: 'Organization',
      cell: (delivery) => <OrganizationLink organization={delivery.organization} />,
      secondary: true,
    },
    { header: 'Alert', cell: (delivery) => delivery.alert.name },
    { header: 'Attempts', cell: (delivery) => delivery.attempts, secondary: true },
    {
      header: 'Last answer',
      cell: (delivery) =>
        delivery.last_error ??
        (delivery.last_status_code === null ? '—' : `HTTP ${delivery.last_status_code}`),
      secondary: true,
    },
    { header: 'Next attempt', cell: (delivery) => <When at={delivery.next_attempt_at} />, secondary: true },
  ];
  return (
    <section aria-labelledby="log-title">
      <h2 id="log-title">Delivery log</h2>
      <Filters>
        <SelectFilter label="Status" param="status" options={DELIVERY_STATUSES} />
      </Filters>
      <PagedList
        query={deliveries}
        what="deliveries"
        columns={columns}
        empty={<p>No deliveries{status ? ' with this status' : ' yet'}.</p>}
      >
        {(rows) =>
          rows
            .filter((delivery) => delivery.id === open)
            .map((delivery) => <DeliveryDetail key={delivery.id} base={base} delivery={delivery} />)
        }
      </PagedList>
    </section>
  );
}
