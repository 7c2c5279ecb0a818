// Where a stored secret may go (issue 28).
// - idempotency_keys.identity: who made the request (credentialIdentity, plus the end-user a key
//   acts for), so a replay hands a secret shown once only back to that identity (SPEC 8.8.5).
//   Rows from before carry none: their secrets are replayed to nobody.
// - connections.integration_version / authorized_uris: the integration version in force when the
//   connection was made (null: the draft) and its auth's authorized_uris then. Delivery sends the
//   credential only where that list allows (DESIGN.md 5), until the owner reconnects. Existing
//   connections are pinned to what their integration allows now, which is where they already went.
import type { Knex } from 'knex';
import { latestOf } from '../../packages/versions.ts';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.text('identity');
  });
  await knex.schema.alterTable('connections', (t) => {
    t.text('integration_version');
    t.jsonb('authorized_uris');
  });
  const connections = await knex('connections').select('id', 'org_id', 'space_id', 'integration_package_id', 'auth_key');
  for (const c of connections) {
    const slash = c.integration_package_id.indexOf('/');
    // The package the connection's space sees (its own space's or the default space's).
    const pkg = await knex('packages')
      .where({
        org_id: c.org_id,
        type: 'integration',
        ephemeral: false,
        scope: c.integration_package_id.slice(0, slash),
        name: c.integration_package_id.slice(slash + 1),
      })
      .where((w) => w.where('home_space_id', c.space_id).orWhereIn('home_space_id', knex('spaces').select('id').where({ org_id: c.org_id, kind: 'default' })))
      .first('id', 'draft_manifest');
    if (!pkg) continue; // no integration: nothing to deliver to
    const versions = (await knex('package_versions').where({ package_id: pkg.id }).select('version')).map((r: { version: string }) => r.version);
    const version = latestOf(versions);
    const manifest = version ? (await knex('package_versions').where({ package_id: pkg.id, version }).first('manifest')).manifest : pkg.draft_manifest;
    const uris = manifest?.auths?.[c.auth_key]?.authorized_uris;
    await knex('connections')
      .where({ id: c.id })
      .update({ integration_version: version ?? null, authorized_uris: JSON.stringify(Array.isArray(uris) ? uris : []) });
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('connections', (t) => {
    t.dropColumn('authorized_uris');
    t.dropColumn('integration_version');
  });
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropColumn('identity');
  });
}
