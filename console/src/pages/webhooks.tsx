import { useState } from 'react';
import { useOne } from '../api/hooks';
import type { Webhook } from '../api/types';
import { PageHeader } from '../layout';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { Dialog } from '../ui/dialog';
import { Empty, Loaded } from '../ui/states';
import { Table, type Column } from '../ui/table';
import { LIVE_MS } from './fleet';
import { DeliveryLog, Replay } from './delivery-log';
import { DeleteWebhook, TestWebhook, VerifyWebhook, WebhookForm } from './webhook-forms';
import { RotateSecret } from './webhook-rotate';

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

export function WebhookPage({ id }: { id: string }) {
  const { canWrite } = useSession();
  const webhook = useOne<Webhook>(`/api/v1/webhook/${id}`, { refetchInterval: LIVE_MS });
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
                <RotateSecret webhook={data} />
                <Replay endpoint={data} base={`/api/v1/webhook/${id}`} />
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
          <DeliveryLog base={`/api/v1/webhook/${id}`} />
        </>
      )}
    </Loaded>
  );
}
