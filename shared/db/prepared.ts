// Hot queries (a run read, a launch, the access epoch) as named prepared statements: Postgres
// parses and plans each once per pooled connection instead of on every call, which measured
// about 5x less database CPU for the run read (issue 18). A name must always stand for the same
// SQL text (with `prepared`, node-postgres refuses a reuse with other text, loudly; with
// `preparedShape` the first build's text is the name's), so callers name each shape of query
// they build. Needs a session-level pool (not a transaction-pooling
// PgBouncer): shared/db/README.md, "Prepared statements".
import type { Knex } from 'knex';
import type { Client as PgClient, QueryResultRow } from 'pg';

export function prepared<Q extends Knex.QueryBuilder | Knex.Raw>(name: string, query: Q): Q {
  return query.options({ name }) as Q;
}

/** Stands for the i-th value of a call while a shape is built (see preparedShape). */
class Slot {
  readonly index: number;
  constructor(index: number) {
    this.index = index;
  }
}

const shapes = new Map<string, { sql: string; bindings: unknown[] }>();

/**
 * A prepared query whose SQL is built only once per name too: building it with the query
 * builder cost the API more than the database spent running it (issue 18). `build` gets one
 * stand-in per value and must bind each where the value goes (`.where('r.id', id)`); each call
 * then runs the SQL of the name's first build with its own `values`, so a name stands for one
 * shape (a query whose SQL depends on a value needs a name per variant, like the run read's
 * audience). Values are never null or undefined (a builder would have written `is null`, or
 * refused). Rows come back as from `knex.raw`, on a connection of knex's pool, or on the
 * transaction's own when `knex` is one.
 */
export async function preparedShape<Row extends QueryResultRow>(
  knex: Knex,
  name: string,
  values: readonly unknown[],
  build: (...slots: never[]) => Knex.QueryBuilder | Knex.Raw,
): Promise<Row[]> {
  let shape = shapes.get(name);
  if (!shape) {
    const slots = values.map((_, i) => new Slot(i));
    const { sql, bindings } = build(...(slots as never[])).toSQL();
    const used = new Set(bindings.filter((b) => b instanceof Slot).map((b) => (b as Slot).index));
    if (used.size !== values.length) throw new Error(`preparedShape ${name}: every value must be bound`);
    shape = {
      sql: knex
        .raw(sql, bindings as Knex.RawBinding[])
        .toSQL()
        .toNative().sql,
      bindings: [...bindings],
    };
    shapes.set(name, shape);
  }
  if (values.some((v) => v === null || v === undefined)) throw new Error(`preparedShape ${name}: a value is null or undefined`);
  if ((knex as Knex.Transaction).isCompleted?.()) throw new Error(`preparedShape ${name}: the transaction has already ended`);
  const bindings = shape.bindings.map((b) => (b instanceof Slot ? values[b.index] : b));
  const client = knex.client as { acquireConnection(): Promise<PgClient>; releaseConnection(c: PgClient): Promise<void> };
  const connection = await client.acquireConnection();
  try {
    return (await connection.query<Row>({ name, text: shape.sql, values: bindings })).rows;
  } finally {
    await client.releaseConnection(connection);
  }
}
