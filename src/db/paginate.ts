import type { SelectQueryBuilder } from 'kysely';
import type { Page, PageRequest } from '../http/lists.js';
import type { Executor } from './types.js';

/**
 * One page of a query's rows and the count of all of them. The query carries its own stable order
 * (ending on a unique column); the count runs over the same query without it, so filters cannot drift
 * between the two.
 */
export async function paginate<Row>(
  db: Executor,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table set: the helper serves every list
  query: SelectQueryBuilder<any, any, Row>,
  request: PageRequest,
): Promise<Page<Row>> {
  const [counted, results] = await Promise.all([
    db
      .selectFrom(query.clearOrderBy().as('matching'))
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow(),
    query
      .limit(request.size)
      .offset(request.page * request.size)
      .execute(),
  ]);
  return { total_count: Number(counted.n), results };
}
