import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { useChange, useOne, usePage } from '../api/hooks';
import type { Delivery, Webhook } from '../api/types';
import { PageHeader } from '../layout';
import { replaceParams, useRoute } from '../router';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { Dialog } from '../ui/dialog';
import { Field, FormError, formValues } from '../ui/forms';
import { Filters, isoOf, SelectFilter, useFilter } from '../ui/filters';
import { PagedList, usePageParam } from '../ui/list';
import { Empty, Loaded } from '../ui/states';
import { Table, type Column } from '../ui/table';
import { When } from '../ui/time';
import { LIVE_MS } from './fleet';
import { Attempts } from './notifications';
import { DeleteWebhook, TestWebhook, VerifyWebhook, WebhookForm } from './webhook-forms';

function WebhookState({ webhook }: { webhook: Webhook }) {
  return webhook.is_enabled ? (
    <Badge state="enabled" />
  ) : (
    <Badge state={webhook.disabled_reason ?? 'unverified'} />
  );
}

export function WebhooksPage() {
  const { canWrite } = useSession();
  const [editing, setEditing] = useState<Webhook | 'new'>();
  const webhooks = useOne<Webhook[]>('/api/v2/webhook', { refetchInterval: LIVE_MS });
  const columns: Column<Webhook>[] = [
    { header: 'Name', cell: (webhook) => <a href={`#/webhooks/${webhook.id}`}>{webhook.name}</a> },
    { header: 'State', cell: (webhook) => <WebhookState webhook={webhook} /> },
    { header: 'URL', cell: (webhook) => <code className="url">{webhook.url}</code>, secondary: true },
    { header: 'Alerts', cell: (webhook) => webhook.subscription_count, secondary: true },
    {
      header: 'Actions',
      cell: (webhook) =>
        canWrite ? (
          <div className="row-actions">
            <VerifyWebhook webhook={webhook} />
            <TestWebhook webhook={webhook} />
            <button type="button" className="small" onClick={() => setEditing(webhook)}>
              Edit
            </button>
            <DeleteWebhook webhook={webhook} />
          </div>
        ) : null,
    },
  ];
  return (
    <>
      <PageHeader title="Webhooks">
        {canWrite ? (
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            Create a webhook
          </button>
        ) : undefined}
      </PageHeader>
      <Loaded query={webhooks} what="webhooks">
        {(data) =>
          data.length === 0 ? (
            <Empty>
              <p>
                No webhooks yet. A webhook is an HTTPS endpoint of yours that receives signed notifications.
              </p>
            </Empty>
          ) : (
            <Table caption="Webhooks" columns={columns} rows={data} />
          )
        }
      </Loaded>
      <Dialog
        title={editing === 'new' ? 'Create a webhook' : `Edit ${editing?.name ?? ''}`}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
      >
        {editing === undefined ? null : (
          <WebhookForm
            webhook={editing === 'new' ? undefined : editing}
            onDone={() => setEditing(undefined)}
          />
        )}
      </Dialog>
    </>
  );
}

const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'held', 'expired'];

function DeliveryDetail({ webhookId, delivery }: { webhookId: string; delivery: Delivery }) {
  const { canWrite } = useSession();
  const detail = useOne<Delivery>(`/api/v1/webhook/${webhookId}/deliveries/${delivery.id}`);
  const retry = useChange(
    () => api<Delivery>('POST', `/api/v1/webhook/${webhookId}/deliveries/${delivery.id}/retry`),
    [`/api/v1/webhook/${webhookId}`],
  );
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

function Replay({ webhook }: { webhook: Webhook }) {
  const [open, setOpen] = useState(false);
  const replay = useChange(
    (since: string | undefined) =>
      api<{ queued: number }>('POST', `/api/v1/webhook/${webhook.id}/replay`, { since }),
    [`/api/v1/webhook/${webhook.id}`],
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
        title={`Replay to ${webhook.name}`}
        open={open}
        onClose={() => {
          setOpen(false);
          replay.reset();
        }}
      >
        <form onSubmit={submit} noValidate>
          <p>
            Every notification for this webhook since the time below is sent again (a receiver that lost its
            data recovers it).
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

export function WebhookPage({ id }: { id: string }) {
  const route = useRoute();
  const { canWrite } = useSession();
  const [page] = usePageParam();
  const [status] = useFilter('status');
  const open = route.params.get('delivery') ?? '';
  const webhook = useOne<Webhook>(`/api/v1/webhook/${id}`, { refetchInterval: LIVE_MS });
  const deliveries = usePage<Delivery>(`/api/v1/webhook/${id}/deliveries`, { status }, page, {
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
    <Loaded query={webhook} what="the webhook">
      {(data) => (
        <>
          <p className="crumbs">
            <a href="#/webhooks">Webhooks</a> /
          </p>
          <PageHeader title={data.name}>
            {canWrite ? (
              <>
                <VerifyWebhook webhook={data} small={false} />
                <TestWebhook webhook={data} small={false} />
                <Replay webhook={data} />
                <DeleteWebhook webhook={data} small={false} />
              </>
            ) : undefined}
          </PageHeader>
          <dl className="facts">
            <div>
              <dt>State</dt>
              <dd>
                <WebhookState webhook={data} />
              </dd>
            </div>
            <div>
              <dt>URL</dt>
              <dd>
                <code className="url">{data.url}</code>
              </dd>
            </div>
            <div>
              <dt>Alerts using it</dt>
              <dd>{data.subscription_count}</dd>
            </div>
          </dl>
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
                  .map((delivery) => <DeliveryDetail key={delivery.id} webhookId={id} delivery={delivery} />)
              }
            </PagedList>
          </section>
        </>
      )}
    </Loaded>
  );
}
