// Organization-level model provider credentials and outbound proxies (issue 17). A credential
// holds a provider's base URL and API key once, for several models and for listing the
// provider's models; a proxy is an HTTP(S) forward proxy the organization's model calls go
// through. Secrets (the key, and the whole proxy URL since it may carry a password) are
// AES-256-GCM at rest and never returned.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('model_provider_credentials', (t) => {
    t.text('id').primary(); // mpc_...
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('provider').notNullable();
    t.text('base_url').notNullable();
    t.text('api_key_enc').notNullable();
    t.timestamps(true, true);
    t.unique(['org_id', 'name']);
  });
  await knex.schema.createTable('proxies', (t) => {
    t.text('id').primary(); // prx_...
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('url_enc').notNullable();
    // The URL without its user and password, shown to clients.
    t.text('display_url').notNullable();
    t.boolean('has_credentials').notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.timestamps(true, true);
    t.unique(['org_id', 'name']);
  });
  await knex.raw('CREATE UNIQUE INDEX proxies_one_default ON proxies (org_id) WHERE is_default');
  // A model may take its key (and base URL) from a credential, and name its own proxy. Both
  // are restricted on delete: removing one in use is a 409, never a silent change of route.
  await knex.schema.alterTable('models', (t) => {
    t.text('credential_id').references('model_provider_credentials.id').onDelete('RESTRICT');
    t.text('proxy_id').references('proxies.id').onDelete('RESTRICT');
    t.index(['credential_id']);
    t.index(['proxy_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('models', (t) => {
    t.dropColumn('credential_id');
    t.dropColumn('proxy_id');
  });
  await knex.schema.dropTable('proxies');
  await knex.schema.dropTable('model_provider_credentials');
}
