import { useState, type FormEvent } from 'react';
import { api, type Page } from '../api/client';
import { useChange, useOne } from '../api/hooks';
import type { Role } from '../api/types';
import { PageHeader } from '../layout';
import { useSession } from '../session';
import { Field, FormError, formValues } from '../ui/forms';
import { OrgOptions } from '../ui/orgs';
import { ErrorNote } from '../ui/states';

const FIELDS = ['name', 'email', 'password', 'roles', 'org_id'];

export function UsersPage() {
  const { me, isAdmin } = useSession();
  const roles = useOne<Page<Role>>('/api/v2/role');
  const [added, setAdded] = useState<string>();
  const add = useChange(
    (body: Record<string, unknown>) => api<{ id: string; name: string }>('POST', '/api/v1/user', body),
    [],
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
