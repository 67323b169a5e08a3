import { replaceParams, useRoute } from '../router';

/** A list's order, kept in the URL (`?sort=-name`) like its filters, and the way to sort by a column. */
export interface Sorting {
  /** The API's `sort` value in force: the URL's, or the list's default. */
  sort: string;
  /** A column's header pressed: by it ascending, then descending, then the list's default again. */
  onSort: (key: string) => void;
}

export function useSortParam(defaultSort: string): Sorting {
  const route = useRoute();
  const sort = route.params.get('sort') || defaultSort;
  const onSort = (key: string) => {
    const next = sort === key ? `-${key}` : sort === `-${key}` ? defaultSort : key;
    replaceParams(route, { sort: next === defaultSort ? undefined : next, page: undefined });
  };
  return { sort, onSort };
}

const ARROWS = { ascending: '▲', descending: '▼', none: '↕' } as const;

/** A column header that sorts: a button, with aria-sort on the header cell (set by the table). */
export function ariaSort(sorting: Sorting, key: string): keyof typeof ARROWS {
  return sorting.sort === key ? 'ascending' : sorting.sort === `-${key}` ? 'descending' : 'none';
}

export function SortButton({
  label,
  sortKey,
  sorting,
}: {
  label: string;
  sortKey: string;
  sorting: Sorting;
}) {
  const state = ariaSort(sorting, sortKey);
  return (
    <button type="button" className="sort-button" onClick={() => sorting.onSort(sortKey)}>
      {label}
      <span className="sort-arrow" aria-hidden="true">
        {ARROWS[state]}
      </span>
    </button>
  );
}
