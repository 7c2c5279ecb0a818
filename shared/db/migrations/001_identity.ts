// Identity and tenancy: users, sessions, organizations, spaces, roles, API keys, end-users.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('instance_settings', (t) => {
    t.text('key').primary();
    t.jsonb('value').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('users', (t) => {
    t.text('id').primary();
    t.text('email').notNullable().unique(); // stored lower-cased
    t.text('name').notNullable();
    t.text('password_hash').notNullable();
    t.timestamps(true, true);
  });

  await knex.schema.createTable('sessions', (t) => {
    t.text('id').primary();
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('token_hash').notNullable().unique();
    t.text('realm').notNullable().defaultTo('platform');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('last_extended_at', { useTz: true }).notNullable();
    t.text('ip');
    t.text('user_agent');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id']);
  });

  await knex.schema.createTable('password_resets', (t) => {
    t.text('token_hash').primary();
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id']);
  });

  // Outgoing mail waits here until an SMTP transport is configured.
  await knex.schema.createTable('mail_outbox', (t) => {
    t.text('id').primary();
    t.text('to_email').notNullable();
    t.text('subject').notNullable();
    t.text('body').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('sent_at', { useTz: true });
  });

  await knex.schema.createTable('organizations', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.text('api_version'); // SPEC 9 organization pin; null = current version
    t.timestamps(true, true);
  });

  await knex.schema.createTable('org_members', (t) => {
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('role').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['org_id', 'user_id']);
    t.index(['user_id']);
  });
  await knex.raw(`ALTER TABLE org_members ADD CONSTRAINT org_members_role CHECK (role IN ('owner','admin','member'))`);

  await knex.schema.createTable('spaces', (t) => {
    t.text('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('kind').notNullable();
    t.text('owner_user_id').references('users.id').onDelete('CASCADE');
    t.timestamps(true, true);
    t.index(['org_id']);
  });
  await knex.raw(`ALTER TABLE spaces ADD CONSTRAINT spaces_kind CHECK (kind IN ('default','team','personal'))`);
  await knex.raw(`CREATE UNIQUE INDEX spaces_one_default ON spaces (org_id) WHERE kind = 'default'`);
  await knex.raw(`CREATE UNIQUE INDEX spaces_one_personal ON spaces (org_id, owner_user_id) WHERE kind = 'personal'`);

  await knex.schema.createTable('custom_roles', (t) => {
    t.text('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamps(true, true);
    t.unique(['org_id', 'name']);
  });

  await knex.schema.createTable('space_members', (t) => {
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('preset_role');
    t.text('custom_role_id').references('custom_roles.id').onDelete('RESTRICT');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['space_id', 'user_id']);
    t.index(['org_id', 'user_id']);
  });
  await knex.raw(`ALTER TABLE space_members ADD CONSTRAINT space_members_one_role CHECK ((preset_role IS NULL) <> (custom_role_id IS NULL))`);

  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    t.text('created_by').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('key_hash').notNullable().unique();
    t.text('key_prefix').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'space_id']);
    t.index(['org_id', 'created_by']);
  });

  await knex.schema.createTable('end_users', (t) => {
    t.text('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    t.text('external_id').notNullable();
    t.text('name').notNullable();
    t.timestamps(true, true);
    t.unique(['space_id', 'external_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'end_users',
    'api_keys',
    'space_members',
    'custom_roles',
    'spaces',
    'org_members',
    'organizations',
    'mail_outbox',
    'password_resets',
    'sessions',
    'users',
    'instance_settings',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
