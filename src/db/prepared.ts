import { CompiledQuery, sql, type Compilable, type RawBuilder } from 'kysely';
import { setBounded } from '../lib/bounded-map.js';
import { isPostgres } from './connect.js';
import type { Executor } from './types.js';

/** Where a value goes in a query compiled once: a parameter that is filled anew at each run. */
class Slot {
  constructor(
    readonly name: string,
    /** For a list: the place in the list given for `name`. */
    readonly index?: number,
    /** For a list of rows: the column of that row. */
    readonly column?: string,
  ) {}

  valueFrom(values: Record<string, unknown>): unknown {
    let value = values[this.name];
    if (this.index !== undefined) value = Array.isArray(value) ? (value[this.index] as unknown) : undefined;
    if (this.column !== undefined && value !== undefined)
      value = (value as Record<string, unknown>)[this.column];
    // A missing value is a bug in the caller, never a NULL to store.
    if (value === undefined) throw new Error(`no value for the slot ${this.describe()}`);
    return value;
  }

  private describe(): string {
    return `${this.name}${this.index === undefined ? '' : `[${this.index}]`}${this.column === undefined ? '' : `.${this.column}`}`;
  }
}

/**
 * A parameter named `name`, filled at each run of a `Prepared` query from the values it is given; with an
 * index, from that place in the list given for `name`; with a column too, from that column of that row.
 */
export function slot<T>(name: string, index?: number, column?: string): RawBuilder<T> {
  return sql<T>`${new Slot(name, index, column)}`;
}

/**
 * `count` parameters filled from the list given for `name` (which must have that many items): the count
 * goes in the query's shape, so each length of list compiles once.
 */
export function slots<T>(name: string, count: number): RawBuilder<T>[] {
  return Array.from({ length: count }, (_, index) => sql<T>`${new Slot(name, index)}`);
}

/**
 * Every column of a row type, as a list: given as a record of all of them, so that the compiler says when
 * one is missing (a column left out of a prepared insert would be stored as its default, silently).
 */
export function allColumns<Row>(every: Record<keyof Row & string, true>): (keyof Row & string)[] {
  return Object.keys(every) as (keyof Row & string)[];
}

/** The columns a partial change sets: those given a value (undefined means "leave it"). */
export function givenColumns<Row extends object>(changes: Row): (keyof Row & string)[] {
  return (Object.keys(changes) as (keyof Row & string)[]).filter((key) => changes[key] !== undefined);
}

/** A row of slots for `.values()`: each column filled from the row given for `name`. */
export function rowSlots<Row>(name: string, columns: readonly (keyof Row & string)[], index?: number) {
  const row = Object.fromEntries(columns.map((column) => [column, sql`${new Slot(name, index, column)}`]));
  return row as { [K in keyof Row]: RawBuilder<Row[K]> };
}

/** `count` rows of slots for a multi-row `.values()`, filled from the list of rows given for `name`. */
export function rowsSlots<Row>(name: string, columns: readonly (keyof Row & string)[], count: number) {
  return Array.from({ length: count }, (_, index) => rowSlots<Row>(name, columns, index));
}

/** Shapes compiled per query at most (the oldest dropped first): list lengths are the only open-ended part. */
const SHAPES_PER_QUERY = 64;

/**
 * A query built and compiled once per shape, then run with fresh values in its slots: for the hot
 * statements, whose building (a tree of subqueries, walked again to compile it) costs more than running
 * them. `build` gets the shape (a small plain object: what makes the SQL differ besides the dialect) and
 * must give the same SQL for the same shape and dialect; whatever else varies goes in slots.
 */
export class Prepared<Row, Shape extends object, Values extends Record<string, unknown>> {
  private readonly compiled = new Map<string, CompiledQuery<Row>>();

  constructor(private readonly build: (db: Executor, shape: Shape) => Compilable<Row> | RawBuilder<Row>) {}

  private compiledFor(db: Executor, shape: Shape): CompiledQuery<Row> {
    const key = `${isPostgres(db) ? 'postgres' : 'sqlite'}:${JSON.stringify(shape)}`;
    let query = this.compiled.get(key);
    if (query === undefined) {
      const built = this.build(db, shape);
      // A raw query compiles against the executor that would run it; a builder already knows it.
      query = 'isRawBuilder' in built ? built.compile(db) : built.compile();
      setBounded(this.compiled, key, query, SHAPES_PER_QUERY);
    }
    return query;
  }

  /** Runs the query; its rows (for a write without RETURNING, none: see `run`). */
  async execute(db: Executor, shape: Shape, values: Values): Promise<Row[]> {
    return (await this.run(db, shape, values)).rows;
  }

  /** Runs the query; its rows, and for a write the rows it changed. */
  async run(db: Executor, shape: Shape, values: Values): Promise<{ rows: Row[]; changed: number }> {
    const query = this.compiledFor(db, shape);
    const parameters = query.parameters.map((value) =>
      value instanceof Slot ? value.valueFrom(values) : value,
    );
    const result = await db.executeQuery<Row>(CompiledQuery.raw(query.sql, parameters));
    return { rows: result.rows, changed: Number(result.numAffectedRows ?? 0) };
  }
}
