import { useEffect, useRef, type ReactNode } from 'react';

/** A modal dialog (the platform's own: focus is trapped and Escape closes it). */
export function Dialog({
  title,
  open,
  onClose,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="dialog-title">
      {open ? (
        <>
          <header className="dialog-header">
            <h2 id="dialog-title">{title}</h2>
            <button type="button" className="quiet" onClick={onClose} aria-label="Close">
              ×
            </button>
          </header>
          {children}
        </>
      ) : null}
    </dialog>
  );
}
