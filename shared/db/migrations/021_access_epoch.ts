// The access epoch: one counter that every committed change to who may do what moves on, so an
// API process can keep its credential and membership lookups in memory and still see a
// revocation by the very next request (api/access-cache.ts reads the counter once per request
// instead of the five rows it stands for). Deferred constraint triggers bump it at commit, after
// every other lock the transaction takes, so concurrent changes queue on the row briefly and
// cannot deadlock on it; the bump becomes visible exactly when the change does.
import type { Knex } from 'knex';

// What the cached lookups read (api key rows, org roles, organizations, spaces, space roles,
// custom roles, end-users). Inserts matter where a miss is cached (a role, a membership).
const TRIGGERS: Array<{ table: string; when: string }> = [
  { table: 'api_keys', when: 'AFTER UPDATE OF revoked_at, expires_at, scopes OR DELETE' },
  { table: 'org_members', when: 'AFTER INSERT OR UPDATE OR DELETE' },
  { table: 'space_members', when: 'AFTER INSERT OR UPDATE OR DELETE' },
  { table: 'custom_roles', when: 'AFTER UPDATE OR DELETE' },
  { table: 'end_users', when: 'AFTER DELETE' },
  { table: 'organizations', when: 'AFTER UPDATE OR DELETE' },
  { table: 'spaces', when: 'AFTER UPDATE OR DELETE' },
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE TABLE access_epoch (one boolean PRIMARY KEY DEFAULT true CHECK (one), n bigint NOT NULL)');
  await knex.raw('INSERT INTO access_epoch (n) VALUES (1)');
  await knex.raw(`
    CREATE FUNCTION bump_access_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE access_epoch SET n = n + 1;
      RETURN NULL;
    END $$`);
  for (const t of TRIGGERS) {
    await knex.raw(
      `CREATE CONSTRAINT TRIGGER access_epoch ${t.when} ON ${t.table} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_access_epoch()`,
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const t of TRIGGERS) await knex.raw(`DROP TRIGGER IF EXISTS access_epoch ON ${t.table}`);
  await knex.raw('DROP FUNCTION IF EXISTS bump_access_epoch()');
  await knex.raw('DROP TABLE IF EXISTS access_epoch');
}
