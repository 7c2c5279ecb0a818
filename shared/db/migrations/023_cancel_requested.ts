// When a cancel was asked for (POST /api/runs/{id}/cancel, bulk cancel): executeAgent writes a
// run's `success` itself only while no cancel was asked for and its timeout is not near
// (activities/run-state.ts, `endRun` fenced), so a run the API answered 202 for ends `cancelled`.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.timestamp('cancel_requested_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('cancel_requested_at');
  });
}
