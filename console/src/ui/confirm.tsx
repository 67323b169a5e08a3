import { useState, type ReactNode } from 'react';
import { Dialog } from './dialog';
import { FormError } from './forms';

/**
 * A destructive action behind a dialog that says what it does. With `forceLabel`, a checkbox lets the
 * caller take the related records too (the API's `?force=true`).
 */
export function ConfirmAction({
  label,
  title,
  confirm,
  children,
  forceLabel,
  run,
  pending,
  error,
  small = false,
}: {
  label: string;
  title: string;
  confirm: string;
  children: ReactNode;
  forceLabel?: string;
  run: (force: boolean) => void;
  pending: boolean;
  error: unknown;
  small?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [force, setForce] = useState(false);
  return (
    <>
      <button type="button" className={small ? 'danger small' : 'danger'} onClick={() => setOpen(true)}>
        {label}
      </button>
      <Dialog title={title} open={open} onClose={() => setOpen(false)}>
        {children}
        {forceLabel === undefined ? null : (
          <label className="check">
            <input type="checkbox" checked={force} onChange={(event) => setForce(event.target.checked)} />
            {forceLabel}
          </label>
        )}
        <FormError error={error} />
        <div className="form-actions">
          <button type="button" className="danger" onClick={() => run(force)} disabled={pending}>
            {confirm}
          </button>
        </div>
      </Dialog>
    </>
  );
}
