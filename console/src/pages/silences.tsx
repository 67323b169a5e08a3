import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { useChange, usePage } from '../api/hooks';
import type { Silence } from '../api/types';
import { ALERT_TYPE_OPTIONS, labelOfType } from '../api/vocabulary';
import { PageHeader } from '../layout';
import { useSession } from '../session';
import { Badge } from '../ui/badge';
import { Dialog } from '../ui/dialog';
import { Field, FormError, formValues } from '../ui/forms';
import { Filters, SelectFilter, useFilter } from '../ui/filters';
import { PagedList, usePageParam } from '../ui/list';
import { OrgOptions } from '../ui/orgs';
import { NODE_PICKER, PickerField } from '../ui/picker';
import type { Column } from '../ui/table';
import {
  NextOccurrence,
  RECURRENCE_FIELDS,
  RecurrenceFields,
  timesBody,
  When,
  type Repeats,
} from './silence-recurrence';

const FIELDS = [
  'name',
  'org_id',
  'node_id',
  'types',
  'starts_at',
  'ends_at',
  'comment',
  ...RECURRENCE_FIELDS,
];

function CreateSilence({ onDone }: { onDone: () => void }) {
  const [repeats, setRepeats] = useState<Repeats>('once');
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
      ...timesBody(repeats, event.currentTarget, values),
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
            <OrgOptions />
          </select>
        )}
      </Field>
      <label className="check">
        <input type="checkbox" name="include_child" defaultChecked />
        Include its child organizations
      </label>
      <PickerField
        label="Only this node (optional)"
        error={create.error}
        fields={['node_id']}
        name="node_id"
        {...NODE_PICKER}
      />
      <fieldset>
        <legend>Only these types (none ticked: all)</legend>
        <div className="checks">
          {ALERT_TYPE_OPTIONS.map(([name, label]) => (
            <label key={name} className="check">
              <input type="checkbox" name="types" value={name} />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      <Field label="Repeats" error={create.error} fields={['recurrence.frequency']}>
        {(props) => (
          <select
            {...props}
            name="repeats"
            value={repeats}
            onChange={(event) => setRepeats(event.target.value as Repeats)}
          >
            <option value="once">Once</option>
            <option value="daily">Every day</option>
            <option value="weekly">Every week</option>
          </select>
        )}
      </Field>
      {repeats === 'once' ? (
        <div className="two-fields">
          <Field label="Starts" error={create.error} fields={['starts_at']}>
            {(props) => <input {...props} name="starts_at" type="datetime-local" required />}
          </Field>
          <Field label="Ends" error={create.error} fields={['ends_at']}>
            {(props) => <input {...props} name="ends_at" type="datetime-local" required />}
          </Field>
        </div>
      ) : (
        <RecurrenceFields repeats={repeats} error={create.error} />
      )}
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
  const { canWrite } = useSession();
  const [creating, setCreating] = useState(false);
  const [page] = usePageParam();
  const [state] = useFilter('state');
  const silences = usePage<Silence>('/api/v2/silence', { state }, page);
  const columns: Column<Silence>[] = [
    { header: 'Name', cell: (silence) => silence.name },
    { header: 'State', cell: (silence) => <Badge state={silence.state} /> },
    { header: 'When', cell: (silence) => <When silence={silence} /> },
    { header: 'Next', cell: (silence) => <NextOccurrence silence={silence} /> },
    {
      header: 'Covers',
      cell: (silence) =>
        `${silence.node_id === null ? 'organization' : 'one node'}; ${silence.types === null || silence.types.length === 0 ? 'all types' : silence.types.map(labelOfType).join(', ')}`,
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
        While a window is open, the notifications it covers are kept as suppressed, not sent. When it ends,
        each alert whose condition still holds sends once. A recurring window does so at each occurrence.
      </p>
      <Filters>
        <SelectFilter label="State" param="state" options={['upcoming', 'active', 'ended', 'cancelled']} />
      </Filters>
      <PagedList
        query={silences}
        what="maintenance windows"
        columns={columns}
        empty={<p>No maintenance windows{state ? ' in this state' : ''}.</p>}
      />
      <Dialog title="Plan a maintenance window" open={creating} onClose={() => setCreating(false)}>
        {creating ? <CreateSilence onDone={() => setCreating(false)} /> : null}
      </Dialog>
    </>
  );
}
