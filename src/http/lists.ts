import { Type, type TProperties, type TSchema } from 'typebox';
import { responses } from './schemas.js';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/** Which slice of a list to answer: `page` counts from 0, in pages of `size`. */
export interface PageRequest {
  page: number;
  size: number;
}

/** One page of a list and the number of items in the whole list. */
export interface Page<T> {
  total_count: number;
  results: T[];
}

const pagingFields = {
  page: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 1_000_000,
      default: 0,
      description: 'Page number, counted from 0. A page past the end answers an empty results array.',
    }),
  ),
  size: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: DEFAULT_PAGE_SIZE,
      description: `Items per page, 1 to ${MAX_PAGE_SIZE}.`,
    }),
  ),
};

export interface ListSchemaOptions<Item extends TSchema, Filters extends TProperties> {
  /** The schema of one item of `results`. */
  item: Item;
  /** The stable order of the list, in words, for the OpenAPI description. */
  order: string;
  /** Query filters besides `page` and `size`. */
  filters?: Filters;
  /** Error statuses the route can answer besides 400, 401 and 403. */
  errors?: number[];
}

/**
 * The query and response schemas of every `GET /api/v2/...` list (docs/rules/api.md#lists): `{total_count,
 * results}`, paged with `page` and `size`, in an order stated in the description. Unknown query parameters →
 * 400.
 */
export function listSchema<Item extends TSchema, Filters extends TProperties = Record<never, TSchema>>(
  options: ListSchemaOptions<Item, Filters>,
) {
  return {
    description: `Paged with page (from 0) and size (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE}); total_count counts every matching item. Order: ${options.order}.`,
    querystring: Type.Object<typeof pagingFields & Filters>(
      { ...pagingFields, ...options.filters } as typeof pagingFields & Filters,
      { additionalProperties: false },
    ),
    response: responses(
      {
        200: Type.Object({
          total_count: Type.Integer({ minimum: 0, description: 'How many items match, on every page.' }),
          results: Type.Array(options.item),
        }),
      },
      [400, 401, 403, ...(options.errors ?? [])],
    ),
  };
}

/** The page asked for, with the defaults filled in. */
export function pageRequest(query: { page?: number; size?: number }): PageRequest {
  return { page: query.page ?? 0, size: query.size ?? DEFAULT_PAGE_SIZE };
}

/** A page of a list already held in memory (a fixed catalogue). */
export function pageOf<T>(items: readonly T[], request: PageRequest): Page<T> {
  const start = request.page * request.size;
  return { total_count: items.length, results: items.slice(start, start + request.size) };
}

export function mapPage<T, U>(page: Page<T>, present: (item: T) => U): Page<U> {
  return { total_count: page.total_count, results: page.results.map(present) };
}
