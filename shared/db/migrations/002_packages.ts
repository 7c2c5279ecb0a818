// Packages (agents, skills, integrations, MCP servers): a draft plus immutable versions.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('packages', (t) => {
    t.text('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('scope').notNullable(); // '@acme'
    t.text('name').notNullable(); // 'summarizer'
    t.text('type').notNullable();
    t.text('home_space_id').notNullable().references('spaces.id');
    t.text('source').notNullable().defaultTo('local');
    t.text('forked_from');
    t.boolean('auto_installed').notNullable().defaultTo(false);
    t.boolean('ephemeral').notNullable().defaultTo(false); // inline-run packages
    t.text('created_by').references('users.id').onDelete('SET NULL');
    // The draft: manifest and files ({path: {encoding: 'utf8'|'base64', content}}).
    t.jsonb('draft_manifest').notNullable();
    t.jsonb('draft_files').notNullable();
    t.integer('draft_revision').notNullable().defaultTo(1); // strong ETag source
    t.timestamps(true, true);
    t.unique(['org_id', 'scope', 'name']);
  });
  await knex.raw(`ALTER TABLE packages ADD CONSTRAINT packages_type CHECK (type IN ('agent','skill','integration','mcp-server'))`);

  await knex.schema.createTable('package_versions', (t) => {
    t.text('package_id').notNullable().references('packages.id').onDelete('CASCADE');
    t.text('version').notNullable();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.jsonb('manifest').notNullable();
    t.jsonb('files').notNullable();
    t.text('created_by').references('users.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['package_id', 'version']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('package_versions');
  await knex.schema.dropTableIfExists('packages');
}
