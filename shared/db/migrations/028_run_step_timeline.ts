// The run timeline (DESIGN.md 10, GET /api/runs/{id}/timeline): each journal step also records
// when it began and, for a model call, the tokens and cost it spent, so the timeline shows real
// durations and per-call usage instead of guessing them from the gaps between steps. Rows
// written before stay null (their start is then taken as the previous step's end). A run's
// webhook deliveries are found by the run's event ids (`deterministicEventId(runId:type)`):
// indexed, as a run page reads them.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.timestamp('started_at', { useTz: true });
    t.jsonb('usage'); // {inputTokens, outputTokens, costUsd} of a model call
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.index(['event_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropIndex(['event_id']);
  });
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumns('started_at', 'usage');
  });
}
