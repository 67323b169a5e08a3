import { useState, type FormEvent } from 'react';
import { api, type Page } from '../api/client';
import { useChange, useOne } from '../api/hooks';
import type { Channel, ChannelType } from '../api/types';
import { PageHeader } from '../layout';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { Dialog } from '../ui/dialog';
import { Field, FormError, formValues } from '../ui/forms';
import { Empty, Loaded } from '../ui/states';
import { Table, type Column } from '../ui/table';
import { DeliveryLog, Replay } from './delivery-log';
import { LIVE_MS } from './fleet';
import { DeleteWebhook as DeleteEndpoint, TestWebhook as TestEndpoint } from './webhook-forms';

export const CHANNEL_LABELS: Record<ChannelType, string> = {
  slack: 'Slack',
  msteams: 'Microsoft Teams',
  pagerduty: 'PagerDuty',
};

/** What each type is given: the URL its vendor issued, or PagerDuty's routing key. */
const TARGETS: Record<ChannelType, { field: 'url' | 'routing_key'; label: string; hint: string }> = {
  slack: { field: 'url', label: 'Incoming webhook URL', hint: 'From Slack: an app with Incoming Webhooks.' },
  msteams: {
    field: 'url',
    label: 'Workflows webhook URL',
    hint: 'From Teams: a workflow "when a webhook request is received".',
  },
  pagerduty: {
    field: 'routing_key',
    label: 'Routing key',
    hint: 'The integration key of an Events API v2 integration.',
  },
};

function ChannelState({ channel }: { channel: Channel }) {
  return <Badge state={channel.is_enabled ? 'enabled' : (channel.disabled_reason ?? 'failing')} />;
}

/** Create a channel, or rename one or give it a new URL or key. The URL or key is never shown again. */
function ChannelForm({ channel, onDone }: { channel?: Channel; onDone: () => void }) {
  const [type, setType] = useState<ChannelType>(channel?.type ?? 'slack');
  const target = TARGETS[type];
  const save = useChange(
    (body: Record<string, unknown>) =>
      channel === undefined
        ? api<Channel>('POST', '/api/v1/channel', body)
        : api<Channel>('PUT', `/api/v1/channel/${channel.id}`, body),
    ['/api/v2/channel'],
    onDone,
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    const secret = values.target ? { [target.field]: values.target } : {};
    save.mutate(
      channel === undefined ? { name: values.name, type, ...secret } : { name: values.name, ...secret },
    );
  };
  return (
    <form onSubmit={submit} noValidate>
      <Field label="Name" error={save.error} fields={['name']}>
        {(props) => <input {...props} name="name" defaultValue={channel?.name} required autoComplete="off" />}
      </Field>
      {channel === undefined ? (
        <Field label="Type" error={save.error} fields={['type']}>
          {(props) => (
            <select
              {...props}
              name="type"
              value={type}
              onChange={(event) => setType(event.target.value as ChannelType)}
            >
              {Object.entries(CHANNEL_LABELS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <Field
        label={channel === undefined ? target.label : `New ${target.label.toLowerCase()} (optional)`}
        error={save.error}
        fields={[target.field]}
        hint={`${target.hint} It is a secret: shown only masked once saved.`}
      >
        {(props) => (
          <input
            {...props}
            name="target"
            type={target.field === 'url' ? 'url' : 'password'}
            required={channel === undefined}
            autoComplete="off"
            placeholder={target.field === 'url' ? 'https://' : undefined}
          />
        )}
      </Field>
      <FormError error={save.error} fields={['name', 'type', 'url', 'routing_key']} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {channel === undefined ? 'Add the channel' : 'Save'}
        </button>
      </div>
    </form>
  );
}

export function ChannelsPage() {
  const { canWrite } = useSession();
  const [editing, setEditing] = useState<Channel | 'new'>();
  const channels = useOne<Page<Channel>>('/api/v2/channel?size=100', { refetchInterval: LIVE_MS });
  const columns: Column<Channel>[] = [
    { header: 'Name', cell: (channel) => <a href={`#/channels/${channel.id}`}>{channel.name}</a> },
    { header: 'Type', cell: (channel) => CHANNEL_LABELS[channel.type] },
    { header: 'State', cell: (channel) => <ChannelState channel={channel} /> },
    { header: 'Target', cell: (channel) => <code className="url">{channel.target}</code>, secondary: true },
    { header: 'Alerts', cell: (channel) => channel.subscription_count, secondary: true },
    {
      header: 'Actions',
      cell: (channel) =>
        canWrite ? (
          <div className="row-actions">
            <TestEndpoint webhook={channel} kind="channel" />
            <button type="button" className="small" onClick={() => setEditing(channel)}>
              Edit
            </button>
            <DeleteEndpoint webhook={channel} kind="channel" />
          </div>
        ) : null,
    },
  ];
  return (
    <>
      <PageHeader title="Channels">
        {canWrite ? (
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            Add a channel
          </button>
        ) : undefined}
      </PageHeader>
      <Loaded query={channels} what="channels">
        {(data) =>
          data.results.length === 0 ? (
            <Empty>
              <p>No channels yet. A channel sends alerts to Slack, Microsoft Teams or PagerDuty.</p>
            </Empty>
          ) : (
            <Table caption="Channels" columns={columns} rows={data.results} />
          )
        }
      </Loaded>
      <Dialog
        title={editing === 'new' ? 'Add a channel' : `Edit ${editing?.name ?? ''}`}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
      >
        {editing === undefined ? null : (
          <ChannelForm
            channel={editing === 'new' ? undefined : editing}
            onDone={() => setEditing(undefined)}
          />
        )}
      </Dialog>
    </>
  );
}

export function ChannelPage({ id }: { id: string }) {
  const { canWrite } = useSession();
  const base = `/api/v1/channel/${id}`;
  const channel = useOne<Channel>(base, { refetchInterval: LIVE_MS });
  return (
    <Loaded query={channel} what="the channel">
      {(data) => (
        <>
          <p className="crumbs">
            <a href="#/channels">Channels</a> /
          </p>
          <PageHeader title={data.name}>
            {canWrite ? (
              <>
                <TestEndpoint webhook={data} kind="channel" small={false} />
                <Replay endpoint={data} base={base} />
                <DeleteEndpoint webhook={data} kind="channel" small={false} />
              </>
            ) : undefined}
          </PageHeader>
          <dl className="facts">
            <div>
              <dt>Type</dt>
              <dd>{CHANNEL_LABELS[data.type]}</dd>
            </div>
            <div>
              <dt>State</dt>
              <dd>
                <ChannelState channel={data} />
                {data.is_enabled ? null : ' A successful test enables it again and sends what it held.'}
              </dd>
            </div>
            <div>
              <dt>Target</dt>
              <dd>
                <code className="url">{data.target}</code>
              </dd>
            </div>
            <div>
              <dt>Alerts using it</dt>
              <dd>{data.subscription_count}</dd>
            </div>
          </dl>
          <DeliveryLog base={base} />
        </>
      )}
    </Loaded>
  );
}
