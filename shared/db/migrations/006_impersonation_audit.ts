// Every request made on behalf of an end-user (SPEC 5.6), for owners and admins to review.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('impersonation_audit', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable();
    t.text('request_id').notNullable();
    t.text('key_id').notNullable();
    t.text('end_user_id').notNullable();
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.text('ip');
    t.text('user_agent');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('impersonation_audit');
}
