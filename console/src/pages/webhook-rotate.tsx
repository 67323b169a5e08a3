import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { useChange } from '../api/hooks';
import type { Webhook } from '../api/types';
import { Dialog } from '../ui/dialog';
import { Field, FormError, formValues } from '../ui/forms';
import { ShownOnce } from '../ui/secret';
import { At } from '../ui/time';

interface RotatedSecret {
  secret: string;
  previous_secret_expires_at: string | null;
}

const OVERLAPS = [
  ['86400', 'One day'],
  ['604800', 'One week'],
  ['3600', 'One hour'],
  ['0', 'Not at all: it stops now'],
] as const;

const FIELDS = ['expire_previous_after_s'];

/** A new secret, shown once; the old one keeps signing beside it for the time chosen. */
export function RotateSecret({ webhook }: { webhook: Webhook }) {
  const [open, setOpen] = useState(false);
  const rotate = useChange(
    (seconds: number) =>
      api<RotatedSecret>('POST', `/api/v1/webhook/${webhook.id}/rotate-secret`, {
        expire_previous_after_s: seconds,
      }),
    [],
  );
  const close = () => {
    setOpen(false);
    rotate.reset();
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    rotate.mutate(Number(formValues(event.currentTarget).overlap ?? OVERLAPS[0][0]));
  };
  const expires = rotate.data?.previous_secret_expires_at;
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Rotate secret
      </button>
      <Dialog title={`Rotate the secret of ${webhook.name}`} open={open} onClose={close}>
        {rotate.data === undefined ? (
          <form onSubmit={submit}>
            <Field
              label="The old secret keeps signing for"
              error={rotate.error}
              fields={FIELDS}
              hint="Meanwhile every request carries both signatures: move the receiver to the new secret."
            >
              {(props) => (
                <select {...props} name="overlap" defaultValue={OVERLAPS[0][0]}>
                  {OVERLAPS.map(([value, label]) => (
                    <option key={value} value={value}>
                      {label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <FormError error={rotate.error} fields={FIELDS} />
            <div className="form-actions">
              <button type="submit" className="primary" disabled={rotate.isPending}>
                Rotate
              </button>
            </div>
          </form>
        ) : (
          <div>
            <ShownOnce label="New signing secret" value={rotate.data.secret} />
            <p className="hint">
              {expires === null || expires === undefined ? (
                'The old secret no longer signs.'
              ) : (
                <>
                  The old secret signs too until <At at={expires} />.
                </>
              )}
            </p>
            <div className="form-actions">
              <button type="button" className="primary" onClick={close}>
                Done
              </button>
            </div>
          </div>
        )}
      </Dialog>
    </>
  );
}
