// The oidc module (SPEC 4.2, 5.5; DESIGN.md section 7): its signing keys (sealed), the
// authorization server's state (grants, codes, refresh tokens, device codes, sessions,
// interactions: oidc-provider's models, one row each), and the OAuth clients.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oidc_keys', (t) => {
    t.text('kid').primary();
    t.text('jwk_sealed').notNullable(); // the private ES256 JWK, AES-256-GCM (shared/secrets.ts)
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('retired_at', { useTz: true }); // no longer signs; still published until its tokens expire
  });
  await knex.schema.createTable('oidc_payloads', (t) => {
    t.text('model').notNullable(); // Session, Grant, AuthorizationCode, RefreshToken, DeviceCode, Interaction, ...
    t.text('id').notNullable();
    t.jsonb('payload').notNullable();
    t.text('grant_id');
    t.text('user_code');
    t.text('uid');
    t.text('account_id'); // the subject, so a password change can revoke what it holds
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('consumed_at', { useTz: true });
    t.primary(['model', 'id']);
    t.index(['grant_id']);
    t.index(['user_code']);
    t.index(['uid']);
    t.index(['account_id']);
    t.index(['expires_at']);
  });
  await knex.schema.createTable('oauth_clients', (t) => {
    t.text('id').primary(); // oac_...
    t.text('client_id').notNullable().unique();
    t.text('client_secret_sealed'); // null for public clients (PKCE only)
    t.text('name').notNullable();
    t.text('level').notNullable(); // instance | org | space
    t.uuid('org_id').references('organizations.id').onDelete('CASCADE');
    t.text('space_id').references('spaces.id').onDelete('CASCADE');
    t.jsonb('redirect_uris').notNullable().defaultTo('[]');
    t.jsonb('scopes').notNullable().defaultTo('[]');
    t.boolean('allow_signup').notNullable().defaultTo(false);
    t.text('created_by').references('users.id').onDelete('SET NULL'); // null: dynamic registration
    t.jsonb('metadata').notNullable().defaultTo('{}'); // further RFC 7591 metadata (grant_types, ...)
    t.timestamps(true, true);
    t.index(['org_id', 'space_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('oauth_clients');
  await knex.schema.dropTable('oidc_payloads');
  await knex.schema.dropTable('oidc_keys');
}
