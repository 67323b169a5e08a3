import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { useChange } from '../api/hooks';
import type { FleetNode } from '../api/types';
import { navigate } from '../router';
import { ConfirmAction } from '../ui/confirm';
import { Dialog } from '../ui/dialog';
import { Field, FormError, formValues } from '../ui/forms';
import { OrgOptions } from '../ui/orgs';
import { ShownOnce } from '../ui/secret';

/** Register a node: its token is shown once, with a copy button. */
export function RegisterNode() {
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<FleetNode>();
  const register = useChange(
    (body: Record<string, unknown>) => api<FleetNode>('POST', '/api/v1/node', body),
    ['/api/v2/node'],
    setCreated,
  );
  const close = () => {
    setOpen(false);
    setCreated(undefined);
    register.reset();
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    register.mutate({
      name: values.name,
      ...(values.serial ? { hardware_serial_number: values.serial } : {}),
      ...(values.org ? { create_under: values.org } : {}),
    });
  };
  const fields = ['name', 'hardware_serial_number', 'create_under'];
  return (
    <>
      <button type="button" className="primary" onClick={() => setOpen(true)}>
        Register a node
      </button>
      <Dialog title="Register a node" open={open} onClose={close}>
        {created?.token === undefined ? (
          <form onSubmit={submit} noValidate>
            <Field label="Name" error={register.error} fields={['name']}>
              {(props) => <input {...props} name="name" required autoComplete="off" />}
            </Field>
            <Field
              label="Hardware serial number (optional)"
              error={register.error}
              fields={['hardware_serial_number']}
            >
              {(props) => <input {...props} name="serial" autoComplete="off" />}
            </Field>
            <Field label="Organization" error={register.error} fields={['create_under']}>
              {(props) => (
                <select {...props} name="org">
                  <option value="">My organization</option>
                  <OrgOptions />
                </select>
              )}
            </Field>
            <FormError error={register.error} fields={fields} />
            <div className="form-actions">
              <button type="submit" className="primary" disabled={register.isPending}>
                Register
              </button>
            </div>
          </form>
        ) : (
          <div>
            <ShownOnce label="Node token" value={created.token} />
            <p className="hint">The node's agent sends it in the X-NODE-TOKEN header of its reports.</p>
            <div className="form-actions">
              <button
                type="button"
                className="primary"
                onClick={() => {
                  close();
                  navigate(`/nodes/${created.id}`);
                }}
              >
                Open the node
              </button>
            </div>
          </div>
        )}
      </Dialog>
    </>
  );
}

export function EditNode({ node }: { node: FleetNode }) {
  const [open, setOpen] = useState(false);
  const edit = useChange(
    (body: Record<string, unknown>) => api<FleetNode>('PUT', `/api/v1/node/${node.id}`, body),
    ['/api/v2/node', `/api/v1/node/${node.id}`],
    () => setOpen(false),
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    edit.mutate({ name: values.name, max_headless_time: Number(values.headless) });
  };
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Edit
      </button>
      <Dialog
        title={`Edit ${node.name}`}
        open={open}
        onClose={() => {
          setOpen(false);
          edit.reset();
        }}
      >
        <form onSubmit={submit} noValidate>
          <Field label="Name" error={edit.error} fields={['name']}>
            {(props) => <input {...props} name="name" defaultValue={node.name} required />}
          </Field>
          <Field
            label="Maximum headless time (minutes)"
            error={edit.error}
            fields={['max_headless_time']}
            hint="How long the node may run without reaching the service."
          >
            {(props) => (
              <input
                {...props}
                name="headless"
                type="number"
                min={0}
                defaultValue={node.max_headless_time}
                required
              />
            )}
          </Field>
          <FormError error={edit.error} fields={['name', 'max_headless_time']} />
          <div className="form-actions">
            <button type="submit" className="primary" disabled={edit.isPending}>
              Save
            </button>
          </div>
        </form>
      </Dialog>
    </>
  );
}

export function NewToken({ node }: { node: FleetNode }) {
  const [open, setOpen] = useState(false);
  const [token, setToken] = useState<string>();
  const renew = useChange(
    () => api<FleetNode>('POST', `/api/v1/node/${node.id}/token`),
    [`/api/v1/node/${node.id}`],
    (answer) => setToken(answer.token),
  );
  const close = () => {
    setOpen(false);
    setToken(undefined);
    renew.reset();
  };
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        New token
      </button>
      <Dialog title="New node token" open={open} onClose={close}>
        {token === undefined ? (
          <>
            <p>The current token stops working at once; the agent needs the new one to report again.</p>
            <FormError error={renew.error} />
            <div className="form-actions">
              <button
                type="button"
                className="danger"
                onClick={() => renew.mutate(undefined)}
                disabled={renew.isPending}
              >
                Replace the token
              </button>
            </div>
          </>
        ) : (
          <ShownOnce label="Node token" value={token} />
        )}
      </Dialog>
    </>
  );
}

export function DeleteNode({ node }: { node: FleetNode }) {
  const remove = useChange(
    (force: boolean) => api('DELETE', `/api/v1/node/${node.id}${force ? '?force=true' : ''}`),
    ['/api/v2/node'],
    () => navigate('/fleet'),
  );
  return (
    <ConfirmAction
      label="Delete"
      title={`Delete ${node.name}`}
      confirm="Delete the node"
      forceLabel="Also remove the alerts scoped to this node, its tunnels or services"
      run={(force) => remove.mutate(force)}
      pending={remove.isPending}
      error={remove.error}
    >
      <p>
        The node, its tunnels, services and events are removed. Its agent's reports are refused from then on.
      </p>
    </ConfirmAction>
  );
}
