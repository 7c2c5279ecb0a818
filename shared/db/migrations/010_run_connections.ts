// The connections a run was launched with (DESIGN.md 7): {<integration id>: <conn id>}, chosen
// at launch by the readiness check, for the credential delivery of the run's integrations.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.jsonb('connections').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('connections');
  });
}
