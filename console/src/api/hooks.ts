import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, query, type Page } from './client';

export const PAGE_SIZE = 25;

/**
 * One page of a `GET /api/v2/...` list (`{total_count, results}`): the API pages, never the console.
 * The previous page stays on screen while the next one loads; `refetchInterval` keeps a live list live.
 */
export function usePage<T>(
  path: string,
  filters: Record<string, string | number | boolean | undefined>,
  page: number,
  options: { refetchInterval?: number; size?: number } = {},
) {
  const size = options.size ?? PAGE_SIZE;
  return useQuery({
    queryKey: [path, filters, page, size],
    queryFn: () => api<Page<T>>('GET', `${path}${query({ ...filters, page, size })}`),
    placeholderData: keepPreviousData,
    ...(options.refetchInterval === undefined ? {} : { refetchInterval: options.refetchInterval }),
  });
}

export function useOne<T>(path: string, options: { refetchInterval?: number; enabled?: boolean } = {}) {
  return useQuery({
    queryKey: [path],
    queryFn: () => api<T>('GET', path),
    ...options,
  });
}

/** A change through the API; on success every cached answer under the given paths is read again. */
export function useChange<Input, Output>(
  run: (input: Input) => Promise<Output>,
  invalidates: string[],
  onSuccess?: (output: Output) => void,
) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: run,
    onSuccess: async (output) => {
      onSuccess?.(output);
      await Promise.all(
        invalidates.map((prefix) =>
          client.invalidateQueries({
            predicate: (cached) =>
              typeof cached.queryKey[0] === 'string' && cached.queryKey[0].startsWith(prefix),
          }),
        ),
      );
    },
  });
}

/** Organizations the caller sees, for pickers (their subtree; the first 100). */
export function useOrgs() {
  return useQuery({
    queryKey: ['/api/v2/org', 'picker'],
    queryFn: () =>
      api<Page<{ id: string; name: string; parent_id: string | null }>>('GET', '/api/v2/org?size=100'),
    staleTime: 60_000,
  });
}
