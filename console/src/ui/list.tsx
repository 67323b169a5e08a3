import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import type { Page } from '../api/client';
import { PAGE_SIZE } from '../api/hooks';
import { replaceParams, useRoute } from '../router';
import type { Sorting } from './sorting';
import { Empty, Loaded } from './states';
import { Pager, Table, type Column } from './table';

/** The page of a list, from the URL (`?page=`, from 0), and the way to another one. */
export function usePageParam(): [number, (page: number) => void] {
  const route = useRoute();
  return [
    Number(route.params.get('page') ?? 0),
    (page) => replaceParams(route, { page: page === 0 ? undefined : page }),
  ];
}

/** One page of an API list: loading and error states, its empty state, the table and the pager. */
export function PagedList<T extends { id: string }>({
  query,
  what,
  columns,
  empty,
  sorting,
  children,
}: {
  query: UseQueryResult<Page<T>>;
  /** Plural, for the loading line and the table's caption: "notifications". */
  what: string;
  columns: Column<T>[];
  empty: ReactNode;
  /** The list's order, when its column headers sort it. */
  sorting?: Sorting;
  /** Shown under the table (a selected row's detail). */
  children?: (rows: T[]) => ReactNode;
}) {
  const [page, setPage] = usePageParam();
  return (
    <Loaded query={query} what={what}>
      {(data) =>
        data.total_count === 0 ? (
          <Empty>{empty}</Empty>
        ) : (
          <>
            <Table
              caption={what[0]?.toUpperCase() + what.slice(1)}
              columns={columns}
              rows={data.results}
              sorting={sorting}
            />
            {children?.(data.results)}
            <Pager page={page} size={PAGE_SIZE} total={data.total_count} onPage={setPage} />
          </>
        )
      }
    </Loaded>
  );
}
