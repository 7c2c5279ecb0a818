// Agents' outputs on their way to a run's result, kept in the database instead of Temporal
// history (shared/runs/pending-output.ts): a Temporal payload over 2 MB fails the activity or
// update that carries it, and an output can reach megabytes. A row names its reference, which is
// what travels through Temporal; it goes when the run ends (or with the run).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('pending_outputs', (t) => {
    t.text('run_id').primary().references('id').inTable('runs').onDelete('CASCADE');
    t.text('ref').notNullable();
    t.jsonb('output');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('pending_outputs');
}
