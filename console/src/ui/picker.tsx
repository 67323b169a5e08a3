import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState, type KeyboardEvent } from 'react';
import { api, query, type Page } from '../api/client';
import { Field } from './forms';

/** What a picker offers: a record with a name, and where it is. */
export interface Named {
  id: string;
  name: string;
  organization?: { name: string };
  node?: { name: string };
}

/** How many matches a picker shows: enough to choose from, little enough to read at once. */
const SHOWN = 8;
/** Typing settles for this long before the API is asked. */
const SETTLE_MS = 200;

function useSettled(text: string): string {
  const [settled, setSettled] = useState(text);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(text), SETTLE_MS);
    return () => clearTimeout(timer);
  }, [text]);
  return settled;
}

const placeOf = (item: Named) => item.node?.name ?? item.organization?.name ?? '';

/**
 * A search-as-you-type choice over an API list (a combobox): the API searches, so it is as quick with a
 * hundred thousand nodes as with ten. The chosen id is sent as the form field `name`.
 */
interface PickerProps {
  id: string;
  name: string;
  /** A `GET /api/v2/...` list whose items are `Named`. */
  path: string;
  filters?: Record<string, string | undefined>;
  /** The list's text search; without one, the shown page is narrowed here by name. */
  searchParam?: string;
  initialId?: string | undefined;
  placeholder: string;
  describedBy?: string | undefined;
  invalid?: boolean | undefined;
  onPick?: (item: Named | undefined) => void;
}

/** What picks a node: the node list's own search, by name or serial. */
export const NODE_PICKER = {
  path: '/api/v2/node',
  searchParam: 'search',
  placeholder: 'Type a name or serial',
} as const;

/** A labelled picker, with its hint and the API's message for the fields it sends (see Field). */
export function PickerField({
  label,
  hint,
  error,
  fields,
  ...picker
}: Omit<PickerProps, 'id' | 'describedBy' | 'invalid'> & {
  label: string;
  hint?: string | undefined;
  error: unknown;
  fields: string[];
}) {
  return (
    <Field label={label} error={error} fields={fields} {...(hint === undefined ? {} : { hint })}>
      {(props) => (
        <Picker
          {...picker}
          id={props.id}
          describedBy={props['aria-describedby']}
          invalid={props['aria-invalid']}
        />
      )}
    </Field>
  );
}

function Picker({
  id,
  name,
  path,
  filters = {},
  searchParam,
  initialId,
  placeholder,
  describedBy,
  invalid,
  onPick,
}: PickerProps) {
  const listId = useId();
  const [chosen, setChosen] = useState<Named | undefined>(
    initialId ? { id: initialId, name: initialId } : undefined,
  );
  const [text, setText] = useState('');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const typed = useSettled(text.trim());
  const search = searchParam !== undefined && typed !== '' ? { [searchParam]: typed } : {};
  const found = useQuery({
    queryKey: [path, 'picker', filters, search],
    queryFn: () =>
      api<Page<Named>>(
        'GET',
        `${path}${query({ ...filters, ...search, size: searchParam === undefined ? 100 : SHOWN })}`,
      ),
    enabled: open,
    staleTime: 10_000,
  });
  const known = useQuery({
    queryKey: [path, 'picked', initialId],
    queryFn: () => api<Named>('GET', `${path.replace('/api/v2/', '/api/v1/')}/${initialId}`),
    enabled: initialId !== undefined && initialId !== '',
    retry: false,
  });
  useEffect(() => {
    if (known.data !== undefined) setChosen((now) => (now?.id === known.data.id ? known.data : now));
  }, [known.data]);

  const options = (found.data?.results ?? [])
    .filter((item) => searchParam !== undefined || item.name.toLowerCase().includes(typed.toLowerCase()))
    .slice(0, SHOWN);
  const more = (found.data?.total_count ?? 0) - options.length;

  const pick = (item: Named | undefined) => {
    setChosen(item);
    setText('');
    setOpen(false);
    onPick?.(item);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      setOpen(true);
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((now) => Math.min(Math.max(now + step, 0), Math.max(options.length - 1, 0)));
    } else if (event.key === 'Enter' && open && options[active] !== undefined) {
      event.preventDefault();
      pick(options[active]);
    } else if (event.key === 'Escape' && open) {
      event.preventDefault();
      setOpen(false);
    }
  };

  return (
    <div className="picker">
      <input type="hidden" name={name} value={chosen?.id ?? ''} />
      <input
        id={id}
        type="text"
        role="combobox"
        aria-expanded={open}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={open && options[active] ? `${listId}-${active}` : undefined}
        aria-describedby={describedBy}
        aria-invalid={invalid}
        autoComplete="off"
        placeholder={placeholder}
        value={open ? text : (chosen?.name ?? '')}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onChange={(event) => {
          setText(event.target.value);
          setActive(0);
          setOpen(true);
        }}
        onKeyDown={onKeyDown}
      />
      {chosen === undefined ? null : (
        <button type="button" className="quiet small" onClick={() => pick(undefined)}>
          Clear<span className="visually-hidden"> {chosen.name}</span>
        </button>
      )}
      <div className="picker-drop" hidden={!open}>
        <ul id={listId} role="listbox" className="picker-options">
          {options.map((item, index) => (
            <li
              key={item.id}
              id={`${listId}-${index}`}
              role="option"
              aria-selected={index === active}
              // Chosen before the input's blur closes the list.
              onMouseDown={(event) => {
                event.preventDefault();
                pick(item);
              }}
            >
              <span>{item.name}</span> <span className="picker-place">{placeOf(item)}</span>
            </li>
          ))}
        </ul>
        <p className="picker-note" role="status">
          {found.isPending
            ? 'Searching…'
            : options.length === 0
              ? 'Nothing matches.'
              : more > 0 && searchParam !== undefined
                ? `${more.toLocaleString('en')} more: type to narrow.`
                : ''}
        </p>
      </div>
    </div>
  );
}
