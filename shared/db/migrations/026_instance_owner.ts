// Whom the instance model (MODEL_*) serves (DESIGN.md 5, issue 28): by default the organizations
// the instance owner created and still owns. Records who created each organization, and who the
// instance owner is (the bootstrap user, in instance_settings `instance_owner`).
// Backfill: an organization's creator is its first member (createOrganization adds it in the
// creating transaction); the instance owner is the user created in the bootstrap redemption's
// transaction, the one created closest to `redeemed_at`.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.text('created_by_user_id').references('users.id').onDelete('SET NULL');
  });
  await knex.raw(`
    UPDATE organizations o SET created_by_user_id = creator.user_id
    FROM (SELECT DISTINCT ON (org_id) org_id, user_id FROM org_members ORDER BY org_id, created_at, (role = 'owner') DESC) creator
    WHERE creator.org_id = o.id`);
  const boot = await knex('instance_settings').where({ key: 'bootstrap' }).first('value');
  const redeemedAt = (boot?.value as { redeemed_at?: string | null } | undefined)?.redeemed_at;
  if (!redeemedAt) return;
  const owner = await knex('users').orderByRaw('abs(extract(epoch from created_at - ?::timestamptz))', [redeemedAt]).first('id');
  if (!owner) return;
  await knex('instance_settings')
    .insert({ key: 'instance_owner', value: JSON.stringify({ userId: owner.id }), updated_at: new Date() })
    .onConflict('key')
    .ignore();
}

export async function down(knex: Knex): Promise<void> {
  await knex('instance_settings').where({ key: 'instance_owner' }).delete();
  await knex.schema.alterTable('organizations', (t) => {
    t.dropColumn('created_by_user_id');
  });
}
