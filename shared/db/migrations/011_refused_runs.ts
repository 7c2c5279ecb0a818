// A launch refused before its run could be admitted (a schedule tick over the limits, its agent
// gone, its input invalid) is still recorded as a `failed` run, marked `refused`: the
// organization's launch rate counts admitted runs only (issue 11).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.boolean('refused').notNullable().defaultTo(false);
  });
  // Rows written before this column: a refusal was inserted already finished, in one statement.
  await knex('runs').where({ status: 'failed' }).whereNull('started_at').whereRaw('finished_at = created_at').update({ refused: true });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('refused');
  });
}
