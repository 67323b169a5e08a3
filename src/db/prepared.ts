import { CompiledQuery, sql, type Compilable, type RawBuilder } from 'kysely';
import { isPostgres } from './connect.js';
import type { Executor } from './types.js';

/** Where a value goes in a query compiled once: a parameter that is filled anew at each run. */
class Slot {
  constructor(readonly name: string) {}
}

/** A parameter named `name`, filled at each run of a `Prepared` query from the values it is given. */
export function slot<T>(name: string): RawBuilder<T> {
  return sql<T>`${new Slot(name)}`;
}

/**
 * A query built and compiled once per shape, then run with fresh values in its slots: for the hot
 * statements whose building (a tree of subqueries) costs more than running them. `build` gets the shape
 * (a small plain object: what makes the SQL differ besides the dialect) and must give the same SQL for the
 * same shape and dialect; whatever else varies goes in slots.
 */
export class Prepared<Row, Shape, Values extends Record<string, unknown>> {
  private readonly compiled = new Map<string, CompiledQuery<Row>>();

  constructor(private readonly build: (db: Executor, shape: Shape) => Compilable<Row>) {}

  async execute(db: Executor, shape: Shape, values: Values): Promise<Row[]> {
    const key = `${isPostgres(db) ? 'postgres' : 'sqlite'}:${JSON.stringify(shape)}`;
    let query = this.compiled.get(key);
    if (query === undefined) {
      query = this.build(db, shape).compile();
      this.compiled.set(key, query);
    }
    const parameters = query.parameters.map((value) => {
      if (!(value instanceof Slot)) return value;
      if (!(value.name in values)) throw new Error(`no value for the slot ${value.name}`);
      return values[value.name];
    });
    const result = await db.executeQuery<Row>(CompiledQuery.raw(query.sql, parameters));
    return result.rows;
  }
}
