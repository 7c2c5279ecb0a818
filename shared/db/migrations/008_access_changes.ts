// Credential and membership changes announce themselves on one channel, whatever code path
// made them (a route, a cascade, a manual fix in psql): long-lived reads (SSE streams,
// long-polls) listen there and end or re-scope within moments (SPEC 3.2, revocation is
// immediate). Triggers rather than calls in each route, so no writer can forget one.
// Payload: {userId?, orgId?, endUserId?}; identical payloads in one transaction arrive once.
import type { Knex } from 'knex';

// The channel name is fixed here (a migration must not change with later code); the listener
// reads it from shared/identity/access-grants.ts.
const CHANNEL = 'access_changes';

const TRIGGERS: Array<{ table: string; when: string; payload: string }> = [
  // Revocation or a new expiry; not the once-a-minute last_used_at touch.
  {
    table: 'api_keys',
    when: 'AFTER UPDATE OF revoked_at, expires_at, scopes OR DELETE',
    payload: `json_build_object('userId', r.created_by, 'orgId', r.org_id)`,
  },
  // Sign-out, password change or reset, user deletion (cascade). Extensions are updates: ignored.
  { table: 'sessions', when: 'AFTER DELETE', payload: `json_build_object('userId', r.user_id)` },
  { table: 'org_members', when: 'AFTER INSERT OR UPDATE OR DELETE', payload: `json_build_object('userId', r.user_id, 'orgId', r.org_id)` },
  { table: 'space_members', when: 'AFTER INSERT OR UPDATE OR DELETE', payload: `json_build_object('userId', r.user_id, 'orgId', r.org_id)` },
  // A custom role's scopes touch every member holding it: the whole organization is re-checked.
  { table: 'custom_roles', when: 'AFTER UPDATE OR DELETE', payload: `json_build_object('orgId', r.org_id)` },
  // An impersonated end-user that is deleted ends the streams opened on its behalf.
  { table: 'end_users', when: 'AFTER DELETE', payload: `json_build_object('orgId', r.org_id, 'endUserId', r.id)` },
];

export async function up(knex: Knex): Promise<void> {
  for (const t of TRIGGERS) {
    await knex.raw(`
      CREATE FUNCTION notify_access_change_${t.table}() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE r ${t.table};
      BEGIN
        r := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
        PERFORM pg_notify('${CHANNEL}', ${t.payload}::text);
        RETURN NULL;
      END $$`);
    await knex.raw(`CREATE TRIGGER access_change ${t.when} ON ${t.table} FOR EACH ROW EXECUTE FUNCTION notify_access_change_${t.table}()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const t of TRIGGERS) {
    await knex.raw(`DROP TRIGGER IF EXISTS access_change ON ${t.table}`);
    await knex.raw(`DROP FUNCTION IF EXISTS notify_access_change_${t.table}()`);
  }
}
