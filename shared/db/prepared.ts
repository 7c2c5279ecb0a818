// Hot queries (a run read, a launch, the access epoch) as named prepared statements: Postgres
// parses and plans each once per pooled connection instead of on every call, which measured
// about 5x less database CPU for the run read (issue 18). A name must always stand for the same
// SQL text on a connection (node-postgres refuses a reuse with other text, loudly), so callers
// name each shape of query they build. Needs a session-level pool (not a transaction-pooling
// PgBouncer): docs/decisions.md, "Prepared statements".
import type { Knex } from 'knex';

export function prepared<Q extends Knex.QueryBuilder | Knex.Raw>(name: string, query: Q): Q {
  return query.options({ name }) as Q;
}
