import type { ReactNode } from 'react';
import { ariaSort, SortButton, type Sorting } from './sorting';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** Hidden on narrow screens. */
  secondary?: boolean;
  /** The API's `sort` value that orders the list by this column; its header then sorts. */
  sort?: string;
}

export function Table<T extends { id: string }>({
  caption,
  columns,
  rows,
  sorting,
}: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  sorting?: Sorting | undefined;
}) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th
                key={column.header}
                scope="col"
                className={column.secondary ? 'secondary' : undefined}
                aria-sort={sorting && column.sort ? ariaSort(sorting, column.sort) : undefined}
              >
                {sorting && column.sort ? (
                  <SortButton label={column.header} sortKey={column.sort} sorting={sorting} />
                ) : (
                  column.header
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              {columns.map((column) => (
                <td key={column.header} className={column.secondary ? 'secondary' : undefined}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Server-side paging: the API's `page` (from 0) and `size`, with its `total_count`. */
export function Pager({
  page,
  size,
  total,
  onPage,
}: {
  page: number;
  size: number;
  total: number;
  onPage: (page: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / size));
  const first = total === 0 ? 0 : page * size + 1;
  const last = Math.min(total, (page + 1) * size);
  return (
    <nav className="pager" aria-label="Pages">
      <span>
        {first.toLocaleString('en')}–{last.toLocaleString('en')} of {total.toLocaleString('en')}
      </span>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page === 0}>
        Previous
      </button>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page + 1 >= pages}>
        Next
      </button>
    </nav>
  );
}
