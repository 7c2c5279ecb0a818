// A run's journal (DESIGN.md section 8): each model answer and each tool result the sidecar gave
// the runtime, in order, so an attempt on another worker replays them instead of repeating them.
// Holds only what the sandbox saw anyway (answers and redacted tool results), never a credential.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('run_steps', (t) => {
    t.text('run_id').notNullable().references('runs.id').onDelete('CASCADE');
    t.integer('seq').notNullable(); // 1, 2, ... in the order the runtime asked
    t.text('kind').notNullable(); // 'model' | 'tool'
    t.text('name').notNullable(); // the model's name, or the tool's
    t.text('request_hash').notNullable(); // SHA-256 of the request: a replay must ask the same
    t.jsonb('response').notNullable();
    t.integer('attempt').notNullable(); // the executeAgent attempt that wrote it
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['run_id', 'seq']);
  });
  await knex.schema.alterTable('runs', (t) => {
    // executeAgent attempts that ended by handing the run over (a draining worker): every other
    // attempt that did not finish lost its worker, and those losses are what RUN_MAX_WORKER_LOSSES counts.
    t.specificType('handovers', 'integer[]').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => t.dropColumn('handovers'));
  await knex.schema.dropTable('run_steps');
}
