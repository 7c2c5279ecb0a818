// Synthetic runs for benchmarks that need a full `runs` table: copies of one real run (so every
// column, foreign keys included, holds what the service writes) but for the columns given, in
// one INSERT ... SELECT generate_series, the way run.ts grows the table to 1M rows (issue 33).
import type { Knex } from 'knex';

/**
 * SQL expressions per column, `g` being the row's number (1..n). The defaults make finished
 * successful runs one second apart, the newest a second ago.
 */
export const FINISHED_RUNS: Readonly<Record<string, string>> = {
  id: `'run_' || md5(random()::text || g::text)`,
  status: `'success'`,
  created_at: `now() - g * interval '1 second'`,
  started_at: `now() - g * interval '1 second'`,
  finished_at: `now() - g * interval '1 second' + interval '100 milliseconds'`,
};

/** Adds `n` copies of run `template` (with `columns` overriding FINISHED_RUNS), then analyzes `runs`; the ms it took. */
export async function addSyntheticRuns(knex: Knex, template: string, n: number, columns: Record<string, string> = {}): Promise<number> {
  const t0 = performance.now();
  const all: string[] = (
    await knex.raw(`select column_name from information_schema.columns where table_name = 'runs' and table_schema = current_schema()`)
  ).rows.map((r: { column_name: string }) => r.column_name);
  const value = (c: string) => columns[c] ?? FINISHED_RUNS[c] ?? `t.${c}`;
  await knex.raw(`insert into runs (${all.join(', ')}) select ${all.map(value).join(', ')} from generate_series(1, ?) g, (select * from runs where id = ?) t`, [
    n,
    template,
  ]);
  await knex.raw('analyze runs');
  return performance.now() - t0;
}
