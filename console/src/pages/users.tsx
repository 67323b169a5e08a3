import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, type Page } from '../api/client';
import { useChange, useOne, usePage } from '../api/hooks';
import type { Belongings, Role, User, UserDetail, UserRemoval } from '../api/types';
import { PageHeader } from '../layout';
import { useSession } from '../session';
import { ConfirmAction } from '../ui/confirm';
import { Dialog } from '../ui/dialog';
import { Filters, SearchFilter, SelectFilter, useFilter } from '../ui/filters';
import { Field, FormError, formValues } from '../ui/forms';
import { PagedList, usePageParam } from '../ui/list';
import { OrgOptions } from '../ui/orgs';
import { ErrorNote, Loaded } from '../ui/states';
import type { Column } from '../ui/table';

const FIELDS = ['name', 'email', 'password', 'roles', 'org_id'];

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** "2 alerts, 1 webhook and 0 channels". */
const belongingsText = (owns: Belongings) =>
  `${plural(owns.alerts, 'alert')}, ${plural(owns.webhooks, 'webhook')} and ${plural(owns.channels, 'channel')}`;

const ownsAnything = (owns: Belongings) => owns.alerts + owns.webhooks + owns.channels > 0;

/** A user's roles, ticked from the roles there are; Save replaces them (PUT /api/v1/user/{id}). */
function EditRoles({ user, roles }: { user: User; roles: Role[] }) {
  const [open, setOpen] = useState(false);
  const [chosen, setChosen] = useState<string[]>([]);
  const [none, setNone] = useState(false);
  // A change of one's own roles changes what the console offers: `me` is read again too.
  const save = useChange(
    (ids: string[]) => api<User>('PUT', `/api/v1/user/${user.id}`, { roles: ids }),
    ['/api/v2/user', `/api/v1/user/${user.id}`, 'me'],
    () => setOpen(false),
  );
  const start = () => {
    setChosen(user.roles.map((role) => role.id));
    setNone(false);
    save.reset();
    setOpen(true);
  };
  const toggle = (id: string, on: boolean) => {
    setNone(false);
    setChosen((ids) => (on ? [...ids, id] : ids.filter((other) => other !== id)));
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    // The API takes an empty list as "unchanged": a user without a role is refused here.
    setNone(chosen.length === 0);
    if (chosen.length > 0) save.mutate(chosen);
  };
  return (
    <>
      <button type="button" className="small" onClick={start}>
        Edit roles
      </button>
      <Dialog title={`Roles of ${user.name}`} open={open} onClose={() => setOpen(false)}>
        <form onSubmit={submit} noValidate>
          <fieldset>
            <legend>Roles</legend>
            <div className="checks">
              {roles.map((role) => (
                <label key={role.id} className="check">
                  <input
                    type="checkbox"
                    name="roles"
                    value={role.id}
                    checked={chosen.includes(role.id)}
                    onChange={(event) => toggle(role.id, event.target.checked)}
                  />
                  {role.name}
                </label>
              ))}
            </div>
          </fieldset>
          <FormError error={none ? new Error('Tick at least one role.') : save.error} />
          <div className="form-actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              Save
            </button>
          </div>
        </form>
      </Dialog>
    </>
  );
}

/** What removing the user takes with them, read when the dialog opens. */
function WhatGoes({ path, name }: { path: string; name: string }) {
  const detail = useOne<UserDetail>(path);
  return (
    <Loaded query={detail} what="what they own">
      {(user) =>
        ownsAnything(user.owns) ? (
          <p>
            {name}’s API keys stop working at once. This also removes {belongingsText(user.owns)}, with their
            notifications.
          </p>
        ) : (
          <p>{name} owns no alerts, webhooks or channels. Their API keys stop working at once.</p>
        )
      }
    </Loaded>
  );
}

/** Removes a user, with `force=true` when the dialog said what else goes with them. */
function DeleteUser({ user, onRemoved }: { user: User; onRemoved: (text: string) => void }) {
  const path = `/api/v1/user/${user.id}`;
  const client = useQueryClient();
  // The dialog's own read (WhatGoes) fills this: it is what the confirmation showed.
  const detail = useOne<UserDetail>(path, { enabled: false });
  const owns = detail.data?.owns;
  const remove = useChange(
    (force: boolean) => api<UserRemoval>('DELETE', `${path}${force ? '?force=true' : ''}`),
    ['/api/v2/user'],
    (removal) =>
      onRemoved(
        ownsAnything(removal.removed)
          ? `${user.name} was removed, with ${belongingsText(removal.removed)}.`
          : `${user.name} was removed.`,
      ),
  );
  return (
    <ConfirmAction
      label="Delete"
      small
      title={`Delete ${user.name}`}
      confirm="Delete the user"
      run={() =>
        remove.mutate(owns !== undefined && ownsAnything(owns), {
          // They may have gained something since the dialog read it: it says so again.
          onError: () => void client.invalidateQueries({ queryKey: [path] }),
        })
      }
      pending={remove.isPending || detail.isFetching || owns === undefined}
      error={remove.error}
    >
      <WhatGoes path={path} name={user.name} />
    </ConfirmAction>
  );
}

/** The users an Admin sees: those of their organization and below, oldest first. */
function UserList({ roles }: { roles: Role[] }) {
  const { me } = useSession();
  const [page] = usePageParam();
  const [search] = useFilter('search');
  const [role] = useFilter('role');
  const [removed, setRemoved] = useState<string>();
  const users = usePage<User>('/api/v2/user', { search, role }, page);
  const columns: Column<User>[] = [
    {
      header: 'Name',
      cell: (user) => (user.id === me?.id ? `${user.name} (you)` : user.name),
    },
    { header: 'E-mail', cell: (user) => <span className="email">{user.email}</span> },
    { header: 'Organization', cell: (user) => user.organization.name, secondary: true },
    { header: 'Roles', cell: (user) => user.roles.map((one) => one.name).join(', ') },
    { header: 'Verified', cell: (user) => (user.email_verified ? 'yes' : 'not yet'), secondary: true },
    {
      header: 'Actions',
      cell: (user) => (
        <div className="row-actions">
          <EditRoles user={user} roles={roles} />
          {/* Nobody removes themselves. */}
          {user.id === me?.id ? null : <DeleteUser user={user} onRemoved={setRemoved} />}
        </div>
      ),
    },
  ];
  return (
    <section aria-labelledby="user-list-title">
      <h2 id="user-list-title">Users you manage</h2>
      <p className="lede">The users of your organization and those below it, oldest first.</p>
      <Filters>
        <SearchFilter placeholder="Name or e-mail" />
        <SelectFilter
          label="Has the role"
          param="role"
          options={roles.map((one) => [one.id, one.name] as const)}
        />
      </Filters>
      {removed === undefined ? null : <p role="status">{removed}</p>}
      <PagedList
        query={users}
        what="users"
        columns={columns}
        empty={<p>{search || role ? 'No user matches these filters.' : 'No users.'}</p>}
      />
    </section>
  );
}

export function UsersPage() {
  const { me, isAdmin } = useSession();
  const roles = useOne<Page<Role>>('/api/v2/role');
  const [added, setAdded] = useState<string>();
  const add = useChange(
    (body: Record<string, unknown>) => api<{ id: string; name: string }>('POST', '/api/v1/user', body),
    ['/api/v2/user'],
    (user) => setAdded(user.name),
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const values = formValues(form);
    add.mutate(
      {
        name: values.name,
        email: values.email,
        password: values.password,
        roles: [values.role],
        ...(values.org_id ? { org_id: values.org_id } : {}),
      },
      { onSuccess: () => form.reset() },
    );
  };
  return (
    <>
      <PageHeader title="Users" />
      {me === undefined || isAdmin ? null : (
        <ErrorNote title="Not allowed" error={new Error('Only an Admin adds users.')} />
      )}
      {roles.isError ? <ErrorNote error={roles.error} /> : null}
      {isAdmin && roles.data !== undefined ? <UserList roles={roles.data.results} /> : null}
      <section className="panel" aria-labelledby="add-user-title">
        <h2 id="add-user-title">Add a user</h2>
        <p className="lede">
          They receive an e-mail to verify their address, and choose their own password at their first
          sign-in.
        </p>
        <form onSubmit={submit} noValidate>
          <div className="two-fields">
            <Field label="Name" error={add.error} fields={['name']}>
              {(props) => <input {...props} name="name" required autoComplete="off" />}
            </Field>
            <Field label="E-mail" error={add.error} fields={['email']}>
              {(props) => <input {...props} name="email" type="email" required autoComplete="off" />}
            </Field>
          </div>
          <div className="two-fields">
            <Field
              label="First password"
              error={add.error}
              fields={['password']}
              hint="At least 8 characters; changed at first sign-in."
            >
              {(props) => (
                <input {...props} name="password" type="password" required autoComplete="new-password" />
              )}
            </Field>
            <Field label="Role" error={add.error} fields={['roles']}>
              {(props) => (
                <select
                  {...props}
                  name="role"
                  defaultValue="read_only"
                  key={roles.data === undefined ? 'loading' : 'loaded'}
                >
                  {roles.data?.results.map((role) => (
                    <option key={role.id} value={role.id}>
                      {role.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <Field label="Organization" error={add.error} fields={['org_id']}>
            {(props) => (
              <select {...props} name="org_id">
                <option value="">My organization</option>
                <OrgOptions />
              </select>
            )}
          </Field>
          <FormError error={add.error} fields={FIELDS} />
          {added === undefined ? null : <p role="status">{added} was added.</p>}
          <div className="form-actions">
            <button type="submit" className="primary" disabled={add.isPending}>
              Add the user
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
