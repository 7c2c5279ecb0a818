// Runs, their logs, agent memory (notes and pins) and model configurations.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('runs', (t) => {
    t.text('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    t.text('package_id').notNullable().references('packages.id').onDelete('CASCADE');
    t.text('package_version').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.jsonb('input').notNullable();
    t.jsonb('result');
    t.text('error');
    // Who launched it: {type: user|api_key|end_user|schedule, id}; user_id is the person behind it.
    t.text('actor_type').notNullable();
    t.text('actor_id').notNullable();
    t.text('user_id').references('users.id').onDelete('SET NULL');
    t.text('end_user_id').references('end_users.id').onDelete('SET NULL');
    t.text('schedule_id');
    t.integer('timeout_seconds').notNullable();
    t.text('sandbox_mode');
    t.jsonb('usage')
      .notNullable()
      .defaultTo(JSON.stringify({ inputTokens: 0, outputTokens: 0, costUsd: 0 }));
    t.integer('log_seq').notNullable().defaultTo(0); // last run_logs.seq handed out
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.index(['org_id', 'space_id', 'created_at']);
    t.index(['org_id', 'created_at']);
    t.index(['package_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE runs ADD CONSTRAINT runs_status CHECK (status IN ('pending','running','success','failed','timeout','cancelled'))`);
  // Concurrency checks count live runs per organization.
  await knex.raw(`CREATE INDEX runs_live_by_org ON runs (org_id) WHERE status IN ('pending','running')`);

  await knex.schema.createTable('run_logs', (t) => {
    t.text('run_id').notNullable().references('runs.id').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.text('level').notNullable();
    t.text('type').notNullable();
    t.text('message').notNullable();
    t.jsonb('data');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['run_id', 'seq']);
  });

  await knex.schema.createTable('agent_memory', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('package_id').notNullable().references('packages.id').onDelete('CASCADE');
    t.text('actor_key').notNullable(); // 'user:<id>' | 'end_user:<id>' | 'api_key:<id>'
    t.text('kind').notNullable(); // note | pin
    t.text('content').notNullable();
    t.text('run_id').references('runs.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['package_id', 'actor_key', 'kind']);
  });

  await knex.schema.createTable('models', (t) => {
    t.text('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('provider').notNullable();
    t.text('base_url').notNullable();
    t.text('model').notNullable();
    t.text('api_key_enc'); // AES-256-GCM, never returned
    // Optional prices (USD per million tokens) that turn token usage into cost.
    t.double('input_cost_per_mtok');
    t.double('output_cost_per_mtok');
    t.boolean('is_default').notNullable().defaultTo(false);
    t.timestamps(true, true);
    t.unique(['org_id', 'name']);
  });
  await knex.raw(`CREATE UNIQUE INDEX models_one_default ON models (org_id) WHERE is_default`);
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['models', 'agent_memory', 'run_logs', 'runs']) await knex.schema.dropTableIfExists(t);
}
