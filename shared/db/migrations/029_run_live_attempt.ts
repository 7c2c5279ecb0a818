// A fence for a run's journal (DESIGN.md section 8): the attempt of executeAgent that holds the
// run. A retried attempt raises it before it reads the journal, and every step is written only
// by an attempt at least as recent, so an attempt whose worker stalled past its heartbeat and
// wakes after its successor began writes nothing more (it used to record a step or two first,
// which the successor then found taken and gave up to a third attempt).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.integer('live_attempt').notNullable().defaultTo(1);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('live_attempt');
  });
}
