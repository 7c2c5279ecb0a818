// Idempotency keys (SPEC 8.8): shared by every API process and kept across restarts.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_key').notNullable(); // the space id, or '' on organization-level routes
    t.text('key').notNullable();
    t.text('fingerprint').notNullable();
    t.text('state').notNullable(); // in_progress | done
    t.integer('response_status');
    t.jsonb('response_headers');
    t.text('response_body');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['org_id', 'space_key', 'key']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('idempotency_keys');
}
