import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { PAGE_SIZE, useChange, useOrgs, usePage } from '../api/hooks';
import type { Silence } from '../api/types';
import { ALERT_TYPE_NAMES, ALERT_TYPES } from '../api/vocabulary';
import { PageHeader } from '../layout';
import { replaceParams, useRoute } from '../router';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { Dialog } from '../ui/dialog';
import { Field, FormError, formValues } from '../ui/forms';
import { Empty, Loaded } from '../ui/states';
import { Pager, Table, type Column } from '../ui/table';
import { When } from '../ui/time';
import { isoOf } from './events';

const FIELDS = ['name', 'org_id', 'node_id', 'types', 'starts_at', 'ends_at', 'comment'];

function CreateSilence({ onDone }: { onDone: () => void }) {
  const orgs = useOrgs();
  const create = useChange(
    (body: Record<string, unknown>) => api<Silence>('POST', '/api/v1/silence', body),
    ['/api/v2/silence'],
    onDone,
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    const types = new FormData(event.currentTarget).getAll('types').map(String);
    create.mutate({
      name: values.name,
      org_id: values.org_id,
      include_child: values.include_child === 'on',
      ...(values.node_id ? { node_id: values.node_id } : {}),
      ...(types.length > 0 ? { types } : {}),
      starts_at: isoOf(values.starts_at ?? ''),
      ends_at: isoOf(values.ends_at ?? ''),
      ...(values.comment ? { comment: values.comment } : {}),
    });
  };
  return (
    <form onSubmit={submit} noValidate>
      <Field label="Name" error={create.error} fields={['name']}>
        {(props) => <input {...props} name="name" required autoComplete="off" />}
      </Field>
      <Field label="Organization" error={create.error} fields={['org_id']}>
        {(props) => (
          <select {...props} name="org_id" required>
            {orgs.data?.results.map((org) => (
              <option key={org.id} value={org.id}>
                {org.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <label className="check">
        <input type="checkbox" name="include_child" defaultChecked />
        Include its child organizations
      </label>
      <Field label="Only this node (id, optional)" error={create.error} fields={['node_id']}>
        {(props) => <input {...props} name="node_id" autoComplete="off" />}
      </Field>
      <fieldset>
        <legend>Only these types (none ticked: all)</legend>
        <div className="checks">
          {ALERT_TYPE_NAMES.map((name) => (
            <label key={name} className="check">
              <input type="checkbox" name="types" value={name} />
              {ALERT_TYPES[name].label}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="two-fields">
        <Field label="Starts" error={create.error} fields={['starts_at']}>
          {(props) => <input {...props} name="starts_at" type="datetime-local" required />}
        </Field>
        <Field label="Ends" error={create.error} fields={['ends_at']}>
          {(props) => <input {...props} name="ends_at" type="datetime-local" required />}
        </Field>
      </div>
      <Field label="Comment (optional)" error={create.error} fields={['comment']}>
        {(props) => <textarea {...props} name="comment" rows={2} />}
      </Field>
      <FormError error={create.error} fields={FIELDS} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          Create the window
        </button>
      </div>
    </form>
  );
}

function EndSilence({ silence }: { silence: Silence }) {
  const end = useChange(() => api<Silence>('DELETE', `/api/v1/silence/${silence.id}`), ['/api/v2/silence']);
  if (silence.state !== 'active' && silence.state !== 'upcoming') return null;
  return (
    <>
      <button type="button" className="small" onClick={() => end.mutate(undefined)} disabled={end.isPending}>
        {silence.state === 'active' ? 'End now' : 'Cancel'}
      </button>
      <FormError error={end.error} />
    </>
  );
}

export function SilencesPage() {
  const route = useRoute();
  const { canWrite } = useSession();
  const [creating, setCreating] = useState(false);
  const page = Number(route.params.get('page') ?? 0);
  const state = route.params.get('state') ?? '';
  const silences = usePage<Silence>('/api/v2/silence', { state }, page);
  const columns: Column<Silence>[] = [
    { header: 'Name', cell: (silence) => silence.name },
    { header: 'State', cell: (silence) => <Badge state={silence.state} /> },
    { header: 'Starts', cell: (silence) => <When at={silence.starts_at} /> },
    { header: 'Ends', cell: (silence) => <When at={silence.ends_at} /> },
    {
      header: 'Covers',
      cell: (silence) =>
        `${silence.node_id === null ? 'organization' : 'one node'}; ${silence.types === null || silence.types.length === 0 ? 'all types' : silence.types.map((type) => ALERT_TYPES[type as keyof typeof ALERT_TYPES]?.label ?? type).join(', ')}`,
      secondary: true,
    },
    { header: 'Actions', cell: (silence) => (canWrite ? <EndSilence silence={silence} /> : null) },
  ];
  return (
    <>
      <PageHeader title="Maintenance windows">
        {canWrite ? (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            Plan a window
          </button>
        ) : undefined}
      </PageHeader>
      <p className="lede">
        While a window is active, the notifications it covers are kept as suppressed, not sent. When it ends,
        each alert whose condition still holds sends once.
      </p>
      <div className="filters" role="search">
        <label>
          <span>State</span>
          <select
            value={state}
            onChange={(event) => replaceParams(route, { state: event.target.value, page: undefined })}
          >
            <option value="">Any</option>
            {['upcoming', 'active', 'ended', 'cancelled'].map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Loaded query={silences} what="maintenance windows">
        {(data) =>
          data.total_count === 0 ? (
            <Empty>
              <p>No maintenance windows{state ? ' in this state' : ''}.</p>
            </Empty>
          ) : (
            <>
              <Table caption="Maintenance windows" columns={columns} rows={data.results} />
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
      <Dialog title="Plan a maintenance window" open={creating} onClose={() => setCreating(false)}>
        {creating ? <CreateSilence onDone={() => setCreating(false)} /> : null}
      </Dialog>
    </>
  );
}
