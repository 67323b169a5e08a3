import { useState } from 'react';
import { api } from '../api/client';
import { useChange, usePage } from '../api/hooks';
import type { Alert } from '../api/types';
import { ALERT_TYPES, conditionLabel, type AlertType } from '../api/vocabulary';
import { PageHeader } from '../layout';
import { useSession } from '../session';
import { Dialog } from '../ui/dialog';
import { ConfirmAction } from '../ui/confirm';
import { PagedList, usePageParam } from '../ui/list';
import type { Column } from '../ui/table';
import { When } from '../ui/time';
import { AlertForm } from './alert-form';

function conditions(alert: Alert): string {
  return alert.settings.alert_me
    .split(',')
    .map((condition) => conditionLabel(alert.type as AlertType, condition))
    .join(', ');
}

function DeleteAlert({ alert }: { alert: Alert }) {
  const remove = useChange(
    () => api('DELETE', `/api/v1/mysubscriptions/${alert.id}`),
    ['/api/v2/mysubscriptions'],
  );
  return (
    <ConfirmAction
      label="Delete"
      small
      title={`Delete ${alert.name}`}
      confirm="Delete the alert"
      run={() => remove.mutate(undefined)}
      pending={remove.isPending}
      error={remove.error}
    >
      <p>No more notifications come from this alert; those already sent stay in the list.</p>
    </ConfirmAction>
  );
}

const CHANNEL_NAMES = { WEBHOOK: 'webhook', SLACK: 'Slack', MSTEAMS: 'Teams', PAGERDUTY: 'PagerDuty' };

export function AlertsPage() {
  const { canWrite } = useSession();
  const [page] = usePageParam();
  const [editing, setEditing] = useState<Alert | 'new'>();
  const alerts = usePage<Alert>('/api/v2/mysubscriptions', {}, page);
  const columns: Column<Alert>[] = [
    { header: 'Name', cell: (alert) => alert.name },
    { header: 'Type', cell: (alert) => ALERT_TYPES[alert.type as AlertType]?.label ?? alert.type },
    { header: 'When', cell: (alert) => conditions(alert), secondary: true },
    {
      header: 'Channel',
      cell: (alert) =>
        alert.channel_type === 'EMAIL'
          ? 'e-mail'
          : `${CHANNEL_NAMES[alert.channel_type]} ${alert.channel?.name ?? ''}`,
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
      <PagedList
        query={alerts}
        what="alerts"
        columns={columns}
        empty={
          <p>No alerts yet. An alert says which changes in the fleet you want to hear about, and where.</p>
        }
      />
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
