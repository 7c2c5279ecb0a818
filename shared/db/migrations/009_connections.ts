// Integration connections (SPEC 2.7, 4.7; DESIGN.md 7): credentials an actor stored for one auth
// of an integration, in one space; the short-lived login attempts that carry submitted fields to
// the connectLogin workflow without putting them in Temporal history; hosted connect links.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('connections', (t) => {
    t.text('id').primary(); // conn_
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    t.text('integration_package_id').notNullable(); // '@scope/name'
    t.text('auth_key').notNullable();
    // The actor who owns it: a user, or an end-user (Service-User).
    t.text('owner_type').notNullable();
    t.text('owner_id').notNullable();
    t.text('account_id').notNullable().defaultTo('default');
    t.text('label').notNullable();
    t.boolean('needs_reconnection').notNullable().defaultTo(false);
    t.specificType('scopes', 'text[]').notNullable().defaultTo('{}');
    t.text('credentials_sealed').notNullable(); // AES-256-GCM (shared/secrets.ts) of the JSON fields
    t.timestamps(true, true);
    t.index(['org_id', 'space_id', 'owner_type', 'owner_id', 'integration_package_id']);
  });
  await knex.raw(`ALTER TABLE connections ADD CONSTRAINT connections_owner_type CHECK (owner_type IN ('user','end_user'))`);

  await knex.schema.createTable('connect_attempts', (t) => {
    t.text('id').primary(); // cat_
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('fields_sealed').notNullable(); // the submitted fields, deleted by the workflow's activity
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('connect_sessions', (t) => {
    t.text('token_hash').primary(); // SHA-256 of the link token
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    t.text('integration_package_id').notNullable();
    t.text('auth_key').notNullable();
    t.text('owner_type').notNullable();
    t.text('owner_id').notNullable();
    t.specificType('scopes', 'text[]').notNullable().defaultTo('{}');
    t.text('connection_id');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['connect_sessions', 'connect_attempts', 'connections']) await knex.schema.dropTableIfExists(table);
}
