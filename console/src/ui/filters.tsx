import type { ReactNode } from 'react';
import { replaceParams, useRoute } from '../router';

/** A list's filter kept in the URL (`?status=failed`): its value and the way to change it (back to page 0). */
export function useFilter(name: string): [string, (value: string) => void] {
  const route = useRoute();
  return [route.params.get(name) ?? '', (value) => replaceParams(route, { [name]: value, page: undefined })];
}

export function Filters({ children }: { children: ReactNode }) {
  return (
    <div className="filters" role="search">
      {children}
    </div>
  );
}

/** A choice among values, or any. Options are `[value, label]` pairs or plain values. */
export function SelectFilter({
  label,
  param,
  options,
  any = 'Any',
}: {
  label: string;
  param: string;
  options: readonly (string | readonly [string, string])[];
  any?: string;
}) {
  const [value, setValue] = useFilter(param);
  return (
    <label>
      <span>{label}</span>
      <select value={value} onChange={(event) => setValue(event.target.value)}>
        <option value="">{any}</option>
        {options.map((option) => {
          const [optionValue, optionLabel] = typeof option === 'string' ? [option, option] : option;
          return (
            <option key={optionValue} value={optionValue}>
              {optionLabel}
            </option>
          );
        })}
      </select>
    </label>
  );
}

export function TimeFilter({ label, param }: { label: string; param: string }) {
  const [value, setValue] = useFilter(param);
  return (
    <label>
      <span>{label}</span>
      <input type="datetime-local" value={value} onChange={(event) => setValue(event.target.value)} />
    </label>
  );
}

/** A `datetime-local` value as the API's ISO time. */
export const isoOf = (local: string) => (local === '' ? undefined : new Date(local).toISOString());
