import { useState } from 'react';
import { api } from '../api/client';
import { PAGE_SIZE, useChange, usePage } from '../api/hooks';
import type { Alert } from '../api/types';
import { ALERT_TYPES, conditionLabel, type AlertType } from '../api/vocabulary';
import { PageHeader } from '../layout';
import { replaceParams, useRoute } from '../router';
import { useSession } from '../session';
import { Dialog } from '../ui/dialog';
import { FormError } from '../ui/forms';
import { Empty, Loaded } from '../ui/states';
import { Pager, Table, type Column } from '../ui/table';
import { When } from '../ui/time';
import { AlertForm } from './alert-form';

function conditions(alert: Alert): string {
  return alert.settings.alert_me
    .split(',')
    .map((condition) => conditionLabel(alert.type as AlertType, condition))
    .join(', ');
}

function DeleteAlert({ alert }: { alert: Alert }) {
  const [open, setOpen] = useState(false);
  const remove = useChange(
    () => api('DELETE', `/api/v1/mysubscriptions/${alert.id}`),
    ['/api/v2/mysubscriptions'],
  );
  return (
    <>
      <button type="button" className="danger small" onClick={() => setOpen(true)}>
        Delete
      </button>
      <Dialog title={`Delete ${alert.name}`} open={open} onClose={() => setOpen(false)}>
        <p>No more notifications come from this alert; those already sent stay in the list.</p>
        <FormError error={remove.error} />
        <div className="form-actions">
          <button
            type="button"
            className="danger"
            onClick={() => remove.mutate(undefined)}
            disabled={remove.isPending}
          >
            Delete the alert
          </button>
        </div>
      </Dialog>
    </>
  );
}

export function AlertsPage() {
  const route = useRoute();
  const { canWrite } = useSession();
  const page = Number(route.params.get('page') ?? 0);
  const [editing, setEditing] = useState<Alert | 'new'>();
  const alerts = usePage<Alert>('/api/v2/mysubscriptions', {}, page);
  const columns: Column<Alert>[] = [
    { header: 'Name', cell: (alert) => alert.name },
    { header: 'Type', cell: (alert) => ALERT_TYPES[alert.type as AlertType]?.label ?? alert.type },
    { header: 'When', cell: (alert) => conditions(alert), secondary: true },
    {
      header: 'Channel',
      cell: (alert) => (alert.channel_type === 'EMAIL' ? 'e-mail' : `webhook ${alert.channel?.name ?? ''}`),
    },
    { header: 'Created', cell: (alert) => <When at={alert.created_at} />, secondary: true },
    {
      header: 'Actions',
      cell: (alert) =>
        canWrite ? (
          <div className="row-actions">
            <button type="button" className="small" onClick={() => setEditing(alert)}>
              Edit
            </button>
            <DeleteAlert alert={alert} />
          </div>
        ) : null,
    },
  ];
  return (
    <>
      <PageHeader title="Alerts">
        {canWrite ? (
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            Create an alert
          </button>
        ) : undefined}
      </PageHeader>
      <Loaded query={alerts} what="alerts">
        {(data) =>
          data.total_count === 0 ? (
            <Empty>
              <p>
                No alerts yet. An alert says which changes in the fleet you want to hear about, and where.
              </p>
            </Empty>
          ) : (
            <>
              <Table caption="Alerts" columns={columns} rows={data.results} />
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
      <Dialog
        title={editing === 'new' ? 'Create an alert' : `Edit ${editing?.name ?? ''}`}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
      >
        {editing === undefined ? null : (
          <AlertForm alert={editing === 'new' ? undefined : editing} onDone={() => setEditing(undefined)} />
        )}
      </Dialog>
    </>
  );
}
