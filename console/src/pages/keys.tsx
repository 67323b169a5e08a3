import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { useChange, usePage } from '../api/hooks';
import type { ApiKey } from '../api/types';
import { PageHeader } from '../layout';
import { Dialog } from '../ui/dialog';
import { Field, FormError, formValues } from '../ui/forms';
import { ShownOnce } from '../ui/secret';
import { PagedList, usePageParam } from '../ui/list';
import type { Column } from '../ui/table';
import { When } from '../ui/time';

function CreateKey() {
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<ApiKey>();
  const create = useChange(
    (body: { name?: string }) => api<ApiKey>('POST', '/api/v1/apikey', body),
    ['/api/v2/apikey'],
    setCreated,
  );
  const close = () => {
    setOpen(false);
    setCreated(undefined);
    create.reset();
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const name = formValues(event.currentTarget).name;
    create.mutate(name ? { name } : {});
  };
  return (
    <>
      <button type="button" className="primary" onClick={() => setOpen(true)}>
        Create a key
      </button>
      <Dialog title="Create an API key" open={open} onClose={close}>
        {created?.key === undefined ? (
          <form onSubmit={submit} noValidate>
            <Field
              label="Name (optional)"
              error={create.error}
              fields={['name']}
              hint="Where the key is used, to recognise it later."
            >
              {(props) => <input {...props} name="name" autoComplete="off" />}
            </Field>
            <FormError error={create.error} fields={['name']} />
            <div className="form-actions">
              <button type="submit" className="primary" disabled={create.isPending}>
                Create
              </button>
            </div>
          </form>
        ) : (
          <ShownOnce label="API key" value={created.key} />
        )}
      </Dialog>
    </>
  );
}

function RevokeKey({ apiKey }: { apiKey: ApiKey }) {
  const revoke = useChange(() => api('DELETE', `/api/v1/apikey/${apiKey.id}`), ['/api/v2/apikey']);
  return (
    <>
      <button
        type="button"
        className="danger small"
        onClick={() => revoke.mutate(undefined)}
        disabled={revoke.isPending}
      >
        Revoke
      </button>
      <FormError error={revoke.error} />
    </>
  );
}

export function KeysPage() {
  const [page] = usePageParam();
  const keys = usePage<ApiKey>('/api/v2/apikey', {}, page);
  const columns: Column<ApiKey>[] = [
    { header: 'Name', cell: (key) => key.name },
    { header: 'Starts with', cell: (key) => <code>{key.prefix}…</code> },
    { header: 'Created', cell: (key) => <When at={key.created_at} /> },
    { header: 'Actions', cell: (key) => <RevokeKey apiKey={key} /> },
  ];
  return (
    <>
      <PageHeader title="API keys">
        <CreateKey />
      </PageHeader>
      <p className="lede">Your own keys. Revoking the one this console signed in with signs you out.</p>
      <PagedList query={keys} what="API keys" columns={columns} empty={<p>No keys.</p>} />
    </>
  );
}
