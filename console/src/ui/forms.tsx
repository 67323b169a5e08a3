import { useId, type ReactNode } from 'react';
import { ApiError } from '../api/client';
import { errorText } from './states';

interface ControlProps {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
}

/**
 * A labelled control with its hint and the API's validation message for the fields it sends (`fields`,
 * as the API names them: `url`, `settings.alert_me`), tied to the control for assistive technology.
 */
export function Field({
  label,
  error,
  fields = [],
  hint,
  children,
}: {
  label: string;
  error?: unknown;
  fields?: string[];
  hint?: string;
  children: (props: ControlProps) => ReactNode;
}) {
  const id = useId();
  const problem = problemOf(error, fields);
  const describedBy = [hint === undefined ? '' : `${id}-hint`, problem === undefined ? '' : `${id}-problem`]
    .filter((part) => part !== '')
    .join(' ');
  return (
    <div className={problem === undefined ? 'field' : 'field field-invalid'}>
      <label htmlFor={id}>{label}</label>
      {children({
        id,
        ...(describedBy === '' ? {} : { 'aria-describedby': describedBy }),
        ...(problem === undefined ? {} : { 'aria-invalid': true }),
      })}
      {hint === undefined ? null : (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {problem === undefined ? null : (
        <p className="problem" id={`${id}-problem`}>
          {problem}
        </p>
      )}
    </div>
  );
}

function problemOf(error: unknown, fields: string[]): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  for (const field of fields) {
    const message = error.about(field);
    if (message !== undefined) return `${field.replace(/^settings\./, '')} ${message}`;
  }
  return undefined;
}

/** A form's error in the API's words, unless every problem it names is shown at one of the form's fields. */
export function FormError({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (error === null || error === undefined) return null;
  if (
    error instanceof ApiError &&
    error.details.length > 0 &&
    error.details.every((detail) => fields.includes(detail.field))
  ) {
    return null;
  }
  return (
    <p className="form-error" role="alert">
      {errorText(error)}
    </p>
  );
}

/** The trimmed string values of a submitted form. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new FormData(form).entries()) {
    if (typeof value === 'string') values[name] = value.trim();
  }
  return values;
}
