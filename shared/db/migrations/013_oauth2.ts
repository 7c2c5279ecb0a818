// OAuth 2 auths (DESIGN.md 7): the organization's client per integration auth (secret sealed),
// the state and PKCE verifier of a hosted link that went to the provider (state hashed,
// verifier sealed), and a connection's token expiry (not a secret: the refresh schedule).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('integration_oauth_clients', (t) => {
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('integration_package_id').notNullable(); // '@scope/name'
    t.text('auth_key').notNullable();
    t.text('client_id').notNullable();
    t.text('client_secret_sealed').notNullable(); // AES-256-GCM (shared/secrets.ts)
    t.timestamps(true, true);
    t.primary(['org_id', 'integration_package_id', 'auth_key']);
  });
  await knex.schema.alterTable('connect_sessions', (t) => {
    t.text('oauth_state_hash').unique(); // SHA-256 of the `state` sent to the provider
    t.text('oauth_verifier_sealed'); // the PKCE code_verifier, sealed
  });
  await knex.schema.alterTable('connections', (t) => {
    t.timestamp('expires_at', { useTz: true }); // the OAuth 2 access token's expiry, when known
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('connections', (t) => t.dropColumn('expires_at'));
  await knex.schema.alterTable('connect_sessions', (t) => {
    t.dropColumn('oauth_state_hash');
    t.dropColumn('oauth_verifier_sealed');
  });
  await knex.schema.dropTableIfExists('integration_oauth_clients');
}
