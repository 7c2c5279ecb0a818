// Bulk run operations (POST /api/runs/bulk/cancel|replay): one row per job with its progress,
// and one row per run it covers, written once when the job takes its snapshot of the filter.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('bulk_jobs', (t) => {
    t.text('id').primary(); // bulk_...
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    t.text('kind').notNullable(); // cancel | replay
    t.text('status').notNullable().defaultTo('queued'); // queued | running | completed
    t.jsonb('filter').notNullable();
    // Who created it: their run visibility (RunAudience.only) and, for replays, the launcher.
    t.jsonb('audience').notNullable();
    t.text('actor_type').notNullable();
    t.text('actor_id').notNullable();
    t.text('user_id');
    t.text('end_user_id');
    t.integer('total'); // null until the snapshot is taken
    t.boolean('truncated').notNullable().defaultTo(false);
    t.integer('processed').notNullable().defaultTo(0);
    t.integer('succeeded').notNullable().defaultTo(0);
    t.integer('failed').notNullable().defaultTo(0);
    t.integer('skipped').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.index(['org_id', 'space_id', 'created_at']);
  });
  await knex.schema.createTable('bulk_job_items', (t) => {
    t.text('job_id').notNullable().references('bulk_jobs.id').onDelete('CASCADE');
    t.integer('seq').notNullable(); // processing order
    t.text('run_id').notNullable();
    t.text('status').notNullable().defaultTo('queued'); // queued | succeeded | failed | skipped
    t.text('new_run_id'); // replay: the run it launched
    t.text('code'); // failed/skipped: the problem code
    t.text('detail');
    t.timestamp('processed_at', { useTz: true });
    t.primary(['job_id', 'run_id']);
    t.index(['job_id', 'status', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('bulk_job_items');
  await knex.schema.dropTableIfExists('bulk_jobs');
}
