// An agent's output on its way to the run's result, kept in the database instead of Temporal
// history: executeAgent (a cancel asked for, or the timeout near, so runAgent decides) and a
// remote runner's `result` report leave it here, and finalizeRun judges it from here. An output
// can reach megabytes, and a Temporal payload over 2 MB fails the activity or update carrying it.
// Cleared when the run ends.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.jsonb('pending_output');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('pending_output');
  });
}
