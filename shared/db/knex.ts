import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { migrationSource } from './migrations/index.ts';

// Return bigint/numeric counts as numbers (they stay far below 2^53 here).
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export function createKnex(databaseUrl: string, pool: { min: number; max: number } = { min: 0, max: 10 }): Knex {
  return knexFactory({ client: 'pg', connection: databaseUrl, pool });
}

/** Applies pending migrations, reporting each one as it goes. */
export async function migrateLatest(knex: Knex, log: (msg: string) => void = () => {}): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest({ migrationSource })) as [number, string[]];
  for (const name of applied) log(`migration applied: ${name}`);
  return applied;
}
