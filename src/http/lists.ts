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

/**
 * Whose items a list holds, which decides what the published client's `own` does
 * (docs/rules/api.md#list-scope): `yours`, always the caller's own (own changes nothing); `anyone's`, items
 * of several owners (own=true keeps the caller's); `unowned`, items nobody owns (own changes nothing).
 */
export type Ownership = 'yours' | "anyone's" | 'unowned';

const OWN_DESCRIPTIONS: Record<Ownership, string> = {
  yours: 'Accepted for the published client, which sends own=true: these items are always your own.',
  "anyone's": 'true: only your own items.',
  unowned: 'Accepted for the published client, which sends own=true: these items have no owner.',
};

/** The published client's `org_id` and `own`, which it sends with every list it reads. */
function scopeFields(ownership: Ownership) {
  return {
    org_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          "Only the items of this organization and those below it: yours or one below it (another → 404). The items' organization is the owner's unless the list says otherwise.",
      }),
    ),
    own: Type.Optional(Type.Boolean({ description: OWN_DESCRIPTIONS[ownership] })),
  };
}

export interface ListSchemaOptions<Item extends TSchema, Filters extends TProperties> {
  /** The schema of one item of `results`. */
  item: Item;
  /** The stable order of the list, in words, for the OpenAPI description. */
  order: string;
  /** Query filters besides `page` and `size`. */
  filters?: Filters;
  /** Error statuses the route can answer besides 400, 401 and 403 (every `ownership` list also 404s). */
  errors?: number[];
  /**
   * For the `GET /api/v2/...` lists: whose items they hold. Such a list takes `org_id` and `own`, unless its
   * filters declare them with a meaning of their own.
   */
  ownership?: Ownership;
}

/**
 * The query and response schemas of every `GET /api/v2/...` list (docs/rules/api.md#lists): `{total_count,
 * results}`, paged with `page` and `size`, in an order stated in the description. Unknown query parameters →
 * 400.
 */
export function listSchema<Item extends TSchema, Filters extends TProperties = Record<never, TSchema>>(
  options: ListSchemaOptions<Item, Filters>,
) {
  const scope = options.ownership === undefined ? {} : scopeFields(options.ownership);
  const errors = [
    400,
    401,
    403,
    ...(options.errors ?? []),
    ...(options.ownership === undefined ? [] : [404]),
  ];
  return {
    description: `Paged with page (from 0) and size (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE}); total_count counts every matching item. Order: ${options.order}.`,
    querystring: Type.Object<typeof pagingFields & ClientScope & Filters>(
      { ...pagingFields, ...scope, ...options.filters } as typeof pagingFields & ClientScope & Filters,
      { additionalProperties: false },
    ),
    response: responses(
      {
        200: Type.Object({
          total_count: Type.Integer({ minimum: 0, description: 'How many items match, on every page.' }),
          results: Type.Array(options.item),
        }),
      },
      [...new Set(errors)],
    ),
  };
}

/** The published client's scope parameters, as a handler reads them off an `ownership` list's query. */
type ClientScope = ReturnType<typeof scopeFields>;

export interface ListScope {
  org_id?: string;
  own?: boolean;
}

/** The page asked for, with the defaults filled in. */
export function pageRequest(query: { page?: number; size?: number }): PageRequest {
  return { page: query.page ?? 0, size: query.size ?? DEFAULT_PAGE_SIZE };
}

/** The answer of a list that nothing matches, on any page. */
export const NO_ITEMS: Page<never> = Object.freeze({ total_count: 0, results: [] as never[] });

/** A page of a list already held in memory (a fixed catalogue). */
export function pageOf<T>(items: readonly T[], request: PageRequest): Page<T> {
  const start = request.page * request.size;
  return { total_count: items.length, results: items.slice(start, start + request.size) };
}

export function mapPage<T, U>(page: Page<T>, present: (item: T) => U): Page<U> {
  return { total_count: page.total_count, results: page.results.map(present) };
}
