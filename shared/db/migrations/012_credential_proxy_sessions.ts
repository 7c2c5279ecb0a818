// Credential-proxy sessions (SPEC 4.7, 8.5; DESIGN.md 7): `cps_` ids a caller obtains with
// POST /api/credential-proxy/sessions and sends as X-Session-Id; each names the actor whose
// connections the proxy may use (a user, or the end-user of Service-User) in one space.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('credential_proxy_sessions', (t) => {
    t.text('id').primary(); // cps_
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    t.text('owner_type').notNullable();
    t.text('owner_id').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['owner_type', 'owner_id', 'expires_at']);
  });
  await knex.raw(`ALTER TABLE credential_proxy_sessions ADD CONSTRAINT credential_proxy_sessions_owner_type CHECK (owner_type IN ('user','end_user'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('credential_proxy_sessions');
}
