import { useState, type FormEvent } from 'react';
import { api, ApiError, type Page } from '../api/client';
import { useChange, useOne, useOrgs } from '../api/hooks';
import type { Alert, Channel, Webhook } from '../api/types';
import {
  ALERT_TYPE_NAMES,
  ALERT_TYPES,
  conditionLabel,
  extraScope,
  suppressible,
  type AlertType,
} from '../api/vocabulary';
import { Field, FormError, formValues } from '../ui/forms';
import { OrgOptions } from '../ui/orgs';
import { NODE_PICKER, PickerField } from '../ui/picker';
import { CHANNEL_LABELS } from './channels';

const FIELDS = [
  'name',
  'type',
  'settings.alert_me',
  'settings.org_id',
  'settings.include_child',
  'settings.node_id',
  'settings.tunnel_id',
  'settings.pod_id',
  'settings.duration',
  'settings.suppress_when_node_unreachable',
  'channel_type',
  'channel_id',
];

/** The alert's settings as the API takes them: only what the chosen type allows. */
function bodyOf(form: HTMLFormElement, type: AlertType): Record<string, unknown> {
  const values = formValues(form);
  const conditions = new FormData(form).getAll('alert_me').map(String);
  const scope = extraScope(type);
  const settings: Record<string, unknown> = {
    org_id: values.org_id,
    alert_me: conditions.join(','),
    include_child: values.include_child === 'on',
  };
  if (values.node_id) settings.node_id = values.node_id;
  if (scope !== undefined && values[scope]) settings[scope] = values[scope];
  if (ALERT_TYPES[type].duration && values.duration) settings.duration = Number(values.duration);
  if (suppressible(type)) settings.suppress_when_node_unreachable = values.suppress === 'on';
  // The choice is `email`, or an endpoint as `<kind>:<id>` (a webhook or a channel).
  const [kind, channelId] = (values.channel ?? 'email').split(':');
  return {
    name: values.name,
    type,
    settings,
    channel_type: kind,
    ...(channelId === undefined ? {} : { channel_id: channelId }),
  };
}

export function AlertForm({ alert, onDone }: { alert?: Alert; onDone: () => void }) {
  const [type, setType] = useState<AlertType>((alert?.type as AlertType | undefined) ?? 'NODE_STATE_CHANGE');
  const orgs = useOrgs();
  const webhooks = useOne<Webhook[]>('/api/v2/webhook');
  const channels = useOne<Page<Channel>>('/api/v2/channel?size=100');
  const save = useChange(
    (body: Record<string, unknown>) =>
      alert === undefined
        ? api<Alert>('POST', '/api/v1/mysubscriptions', body)
        : api<Alert>('PUT', `/api/v1/mysubscriptions/${alert.id}`, body),
    ['/api/v2/mysubscriptions'],
    onDone,
  );
  const info = ALERT_TYPES[type];
  const scope = extraScope(type);
  const chosen = new Set(
    (alert?.type === type ? alert.settings.alert_me : info.conditions.join(',')).split(','),
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate(bodyOf(event.currentTarget, type));
  };
  const settings = alert?.settings;
  // The chosen node narrows the tunnel or service picker to its own.
  const [nodeId, setNodeId] = useState<string | undefined>(settings?.node_id || undefined);
  return (
    <form onSubmit={submit} noValidate>
      <Field label="Name" error={save.error} fields={['name']}>
        {(props) => <input {...props} name="name" defaultValue={alert?.name} required autoComplete="off" />}
      </Field>
      <Field label="Type" error={save.error} fields={['type']}>
        {(props) => (
          <select
            {...props}
            name="type"
            value={type}
            onChange={(event) => setType(event.target.value as AlertType)}
          >
            {ALERT_TYPE_NAMES.map((name) => (
              <option key={name} value={name}>
                {ALERT_TYPES[name].label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <fieldset
        className={fieldError(save.error, 'settings.alert_me') === undefined ? undefined : 'field-invalid'}
      >
        <legend>Notify when</legend>
        <div className="checks" key={type}>
          {info.conditions.map((condition) => (
            <label key={condition} className="check">
              <input
                type="checkbox"
                name="alert_me"
                value={condition}
                defaultChecked={chosen.has(condition)}
              />
              {conditionLabel(type, condition)}
            </label>
          ))}
        </div>
        <FieldMessage error={save.error} field="settings.alert_me" />
      </fieldset>
      <Field label="Organization" error={save.error} fields={['settings.org_id']}>
        {(props) => (
          <select
            {...props}
            name="org_id"
            defaultValue={settings?.org_id}
            required
            key={orgs.data === undefined ? 'loading' : 'loaded'}
          >
            <OrgOptions />
          </select>
        )}
      </Field>
      <label className="check">
        <input
          type="checkbox"
          name="include_child"
          defaultChecked={settings === undefined || settings.include_child === 'true'}
        />
        Include its child organizations
      </label>
      <PickerField
        label="Only this node (optional)"
        error={save.error}
        fields={['settings.node_id']}
        name="node_id"
        {...NODE_PICKER}
        initialId={settings?.node_id}
        onPick={(node) => setNodeId(node?.id)}
      />
      {scope === undefined ? null : (
        <PickerField
          label={scope === 'tunnel_id' ? 'Only this tunnel (optional)' : 'Only this service (optional)'}
          hint={nodeId === undefined ? 'Choose the node first to list only its own.' : undefined}
          error={save.error}
          fields={[`settings.${scope}`]}
          // A new node: a new list, and nothing chosen from the last one.
          key={`${scope} ${nodeId ?? 'any node'}`}
          name={scope}
          path={scope === 'tunnel_id' ? '/api/v2/tunnel' : '/api/v2/service'}
          filters={{ node_id: nodeId }}
          initialId={settings?.[scope]}
          placeholder="Type a name"
        />
      )}
      {info.duration ? (
        <Field
          label="For at least (minutes)"
          error={save.error}
          fields={['settings.duration']}
          hint="Notify only when the condition still holds this long after it began; 0 notifies at once."
        >
          {(props) => (
            <input
              {...props}
              name="duration"
              type="number"
              min={0}
              defaultValue={settings?.duration ?? '0'}
            />
          )}
        </Field>
      ) : null}
      {suppressible(type) ? (
        <label className="check">
          <input
            type="checkbox"
            name="suppress"
            defaultChecked={settings?.suppress_when_node_unreachable !== 'false'}
          />
          Stay quiet while the node itself is unreachable (its own alert tells the cause)
        </label>
      ) : null}
      <Field label="Send to" error={save.error} fields={['channel_type', 'channel_id']}>
        {(props) => (
          <select
            {...props}
            name="channel"
            defaultValue={
              alert === undefined || alert.channel_type === 'EMAIL'
                ? 'email'
                : `${alert.channel_type.toLowerCase()}:${alert.channel?.id ?? ''}`
            }
            // A default applies when the select first renders: render it again once the endpoints are known.
            key={webhooks.data === undefined || channels.data === undefined ? 'loading' : 'loaded'}
          >
            <option value="email">E-mail to me</option>
            {webhooks.data?.map((webhook) => (
              <option key={webhook.id} value={`webhook:${webhook.id}`}>
                Webhook: {webhook.name}
                {webhook.is_enabled ? '' : ` (${webhook.disabled_reason ?? 'disabled'})`}
              </option>
            ))}
            {channels.data?.results.map((channel) => (
              <option key={channel.id} value={`${channel.type}:${channel.id}`}>
                {CHANNEL_LABELS[channel.type]}: {channel.name}
                {channel.is_enabled ? '' : ` (${channel.disabled_reason ?? 'disabled'})`}
              </option>
            ))}
          </select>
        )}
      </Field>
      <FormError error={save.error} fields={FIELDS} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {alert === undefined ? 'Create the alert' : 'Save'}
        </button>
      </div>
    </form>
  );
}

function fieldError(error: unknown, field: string): string | undefined {
  return error instanceof ApiError ? error.about(field) : undefined;
}

function FieldMessage({ error, field }: { error: unknown; field: string }) {
  const message = fieldError(error, field);
  return message === undefined ? null : (
    <p className="problem">{`${field.replace(/^settings\./, '')} ${message}`}</p>
  );
}
