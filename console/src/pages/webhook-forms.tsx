import { useState, type FormEvent } from 'react';
import { api, type Page } from '../api/client';
import { useChange, useOne } from '../api/hooks';
import type { Alert, Webhook } from '../api/types';
import { ALERT_TYPE_NAMES, ALERT_TYPES } from '../api/vocabulary';
import { navigate } from '../router';
import { Badge } from '../ui/badge';
import { Dialog } from '../ui/dialog';
import { ConfirmAction } from '../ui/confirm';
import { Field, FormError, formValues } from '../ui/forms';
import { ShownOnce } from '../ui/secret';

const WEBHOOK_FIELDS = ['name', 'url', 'secret'];

/** Create a webhook (the secret is shown once), or edit one (a changed URL needs verifying again). */
export function WebhookForm({ webhook, onDone }: { webhook?: Webhook; onDone: () => void }) {
  const [created, setCreated] = useState<Webhook>();
  const save = useChange(
    (body: Record<string, unknown>) =>
      webhook === undefined
        ? api<Webhook>('POST', '/api/v1/webhook', body)
        : api<Webhook>('PUT', `/api/v1/webhook/${webhook.id}`, body),
    ['/api/v2/webhook', '/api/v1/webhook'],
    (answer) => (webhook === undefined ? setCreated(answer) : onDone()),
  );
  if (created?.secret !== undefined) {
    return (
      <div>
        <ShownOnce label="Signing secret" value={created.secret} />
        <p className="hint">
          The receiver checks each notification's signature with it. Verify the webhook next: until then it
          receives nothing.
        </p>
        <div className="form-actions">
          <button type="button" className="primary" onClick={onDone}>
            Done
          </button>
        </div>
      </div>
    );
  }
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    save.mutate({ name: values.name, url: values.url, ...(values.secret ? { secret: values.secret } : {}) });
  };
  return (
    <form onSubmit={submit} noValidate>
      <Field label="Name" error={save.error} fields={['name']}>
        {(props) => <input {...props} name="name" defaultValue={webhook?.name} required autoComplete="off" />}
      </Field>
      <Field
        label="URL"
        error={save.error}
        fields={['url']}
        hint="HTTPS only. A changed URL is verified again before it receives anything."
      >
        {(props) => (
          <input
            {...props}
            name="url"
            type="url"
            defaultValue={webhook?.url}
            required
            placeholder="https://"
          />
        )}
      </Field>
      <Field
        label={webhook === undefined ? 'Secret (optional)' : 'New secret (optional)'}
        error={save.error}
        fields={['secret']}
        hint="Leave empty to have one generated."
      >
        {(props) => <input {...props} name="secret" type="password" autoComplete="new-password" />}
      </Field>
      <FormError error={save.error} fields={WEBHOOK_FIELDS} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {webhook === undefined ? 'Create the webhook' : 'Save'}
        </button>
      </div>
    </form>
  );
}

interface Verification {
  status: 'SUCCESS' | 'FAILED';
  message: string;
}

/** Row actions are small; the same actions at the top of a webhook's page are not. */
interface ActionProps {
  webhook: Webhook;
  small?: boolean;
}

/** Test and delete serve channels too (`kind`), at their own API paths. */
interface EndpointActionProps {
  webhook: { id: string; name: string };
  small?: boolean;
  kind?: 'webhook' | 'channel';
}

/** The lists that change when an endpoint of this kind does. */
const listsOf = (kind: 'webhook' | 'channel') =>
  kind === 'webhook' ? ['/api/v2/webhook'] : ['/api/v2/channel'];

/** Offered while the webhook is disabled (an enabled one is verified already; the API would answer 409). */
export function VerifyWebhook({ webhook, small = true }: ActionProps) {
  const verify = useChange(
    () => api<Verification>('POST', `/api/v1/webhook/${webhook.id}/verify`),
    ['/api/v2/webhook', `/api/v1/webhook/${webhook.id}`],
  );
  return (
    <div className="inline-action">
      {webhook.is_enabled ? null : (
        <button
          type="button"
          className={small ? 'small' : undefined}
          onClick={() => verify.mutate(undefined)}
          disabled={verify.isPending}
        >
          {verify.isPending ? 'Verifying…' : 'Verify'}
        </button>
      )}
      {verify.data === undefined ? null : (
        <span role="status" className="result">
          <Badge state={verify.data.status} /> {verify.data.message}
        </span>
      )}
      <FormError error={verify.error} />
    </div>
  );
}

interface TestAnswer {
  status: number;
  response: unknown;
  error?: string;
}

export function TestWebhook({ webhook, small = true, kind = 'webhook' }: EndpointActionProps) {
  const [open, setOpen] = useState(false);
  // A channel's successful test enables it again: its state is read anew.
  const test = useChange(
    (type: string) => api<TestAnswer>('POST', `/api/v1/${kind}/${webhook.id}/test`, { alert_type: type }),
    kind === 'webhook' ? [] : [...listsOf(kind), `/api/v1/${kind}/${webhook.id}`],
  );
  return (
    <>
      <button type="button" className={small ? 'small' : undefined} onClick={() => setOpen(true)}>
        Test
      </button>
      <Dialog
        title={`Test ${webhook.name}`}
        open={open}
        onClose={() => {
          setOpen(false);
          test.reset();
        }}
      >
        <form
          onSubmit={(event) => {
            event.preventDefault();
            test.mutate(formValues(event.currentTarget).type ?? 'NODE_STATE_CHANGE');
          }}
        >
          <Field label="Sample notification">
            {(props) => (
              <select {...props} name="type">
                {ALERT_TYPE_NAMES.map((name) => (
                  <option key={name} value={name}>
                    {ALERT_TYPES[name].label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <div className="form-actions">
            <button type="submit" className="primary" disabled={test.isPending}>
              Send the sample
            </button>
          </div>
        </form>
        <FormError error={test.error} />
        {test.data === undefined ? null : (
          <div role="status" className="test-answer">
            <p>
              {test.data.status === 0 ? 'No answer' : `HTTP ${test.data.status}`}
              {test.data.error ? ` — ${test.data.error}` : ''}
            </p>
            <pre className="response" tabIndex={0}>
              {JSON.stringify(test.data.response, null, 2)}
            </pre>
          </div>
        )}
      </Dialog>
    </>
  );
}

export function DeleteWebhook({ webhook, small = true, kind = 'webhook' }: EndpointActionProps) {
  const alerts = useOne<Page<Alert>>('/api/v2/mysubscriptions?size=100');
  const using = alerts.data?.results.filter((alert) => alert.channel?.id === webhook.id) ?? [];
  const remove = useChange(
    (force: boolean) => api('DELETE', `/api/v1/${kind}/${webhook.id}${force ? '?force=true' : ''}`),
    [...listsOf(kind), '/api/v2/mysubscriptions'],
    () => navigate(`/${kind}s`),
  );
  return (
    <ConfirmAction
      label="Delete"
      small={small}
      title={`Delete ${webhook.name}`}
      confirm={`Delete the ${kind}`}
      forceLabel="Remove the alerts that use it as well"
      run={(force) => remove.mutate(force)}
      pending={remove.isPending}
      error={remove.error}
    >
      {using.length === 0 ? (
        <p>No alert of yours sends to this {kind}.</p>
      ) : (
        <>
          <p>
            {using.length === 1 ? 'This alert sends' : `These ${using.length} alerts send`} to it; deleting
            the {kind} needs them removed too:
          </p>
          <ul>
            {using.map((alert) => (
              <li key={alert.id}>{alert.name}</li>
            ))}
          </ul>
        </>
      )}
    </ConfirmAction>
  );
}
