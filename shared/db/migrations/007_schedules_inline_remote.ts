// Schedules (SPEC 2.8), inline-run packages that share names (SPEC 4.4) and remote runs with
// their sinks.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('schedules', (t) => {
    t.text('id').primary(); // sch_..., also the Temporal Schedule id
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    t.text('package_id').notNullable().references('packages.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('cron_expression').notNullable();
    t.text('timezone').notNullable();
    t.jsonb('input').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('disabled_reason');
    // The person the scheduled runs execute as (SPEC 2.8); the key it was created with, if any.
    t.text('created_by').notNullable().references('users.id').onDelete('CASCADE');
    t.text('created_with_key_id');
    t.timestamps(true, true);
    t.index(['org_id', 'space_id', 'created_at']);
    t.index(['org_id', 'created_by']);
  });
  await knex.schema.alterTable('runs', (t) => {
    t.index(['schedule_id', 'created_at']);
    // `sandbox` (the service runs it) or `remote` (a runner outside reports through a sink).
    t.text('executor').notNullable().defaultTo('sandbox');
    t.text('sink_secret_hash'); // SHA-256 of the sink secret, remote runs only
    t.timestamp('sink_expires_at', { useTz: true });
  });
  // Inline-run packages are private to their run: they may carry any name, including one a
  // published package (or another inline run) already holds.
  await knex.schema.alterTable('packages', (t) => t.dropUnique(['org_id', 'scope', 'name']));
  await knex.raw('CREATE UNIQUE INDEX packages_org_scope_name ON packages (org_id, scope, name) WHERE NOT ephemeral');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS packages_org_scope_name');
  await knex('packages').where({ ephemeral: true }).delete();
  await knex.schema.alterTable('packages', (t) => t.unique(['org_id', 'scope', 'name']));
  await knex.schema.alterTable('runs', (t) => {
    t.dropIndex(['schedule_id', 'created_at']);
    t.dropColumns('executor', 'sink_secret_hash', 'sink_expires_at');
  });
  await knex.schema.dropTableIfExists('schedules');
}
