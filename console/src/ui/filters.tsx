import { useEffect, useState, type ReactNode } from 'react';
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

/** Typing settles for this long before the list is asked again. */
const SEARCH_SETTLE_MS = 250;

/** A search as you type, kept in the URL (`?search=`) once typing settles, back to page 0. */
export function SearchFilter({
  label = 'Search',
  param = 'search',
  placeholder,
}: {
  label?: string;
  param?: string;
  placeholder?: string;
}) {
  const route = useRoute();
  const [value] = useFilter(param);
  const [typed, setTyped] = useState(value);
  useEffect(() => {
    if (typed === value) return;
    const timer = setTimeout(
      () => replaceParams(route, { [param]: typed, page: undefined }),
      SEARCH_SETTLE_MS,
    );
    return () => clearTimeout(timer);
  }, [typed, value, route, param]);
  return (
    <label>
      <span>{label}</span>
      <input
        type="search"
        value={typed}
        placeholder={placeholder}
        onChange={(event) => setTyped(event.target.value)}
      />
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
