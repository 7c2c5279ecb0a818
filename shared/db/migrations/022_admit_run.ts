// Admission in one round trip (SPEC 8.3, shared/runs/launch.ts): the organization's launch lock,
// its counts and the insert of the run, and its `pending` announcement, in one function call
// instead of six statements. Each statement of a volatile PL/pgSQL function takes a fresh
// snapshot, so the counts read after the lock see every launch committed before it: the limits
// stay as atomic as in the transaction this replaces. A refusal raises `org_run_rate_limited`
// or `org_run_concurrency_exceeded` with the counts as JSON in its DETAIL.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION admit_run(p_rate int, p_concurrency int, p_run jsonb, p_channel text, p_event text)
    RETURNS SETOF runs LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      r runs := jsonb_populate_record(null::runs, p_run);
      live int;
      recent int;
      free_in double precision;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('runs:' || r.org_id));
      SELECT count(*) FILTER (WHERE status IN ('pending', 'running')),
             count(*) FILTER (WHERE created_at > now() - interval '60 seconds' AND NOT refused),
             extract(epoch FROM (min(created_at) FILTER (WHERE created_at > now() - interval '60 seconds' AND NOT refused) + interval '60 seconds' - now()))
        INTO live, recent, free_in
        FROM runs
       WHERE org_id = r.org_id AND (status IN ('pending', 'running') OR created_at > now() - interval '60 seconds');
      IF recent >= p_rate THEN
        RAISE EXCEPTION 'org_run_rate_limited' USING DETAIL = json_build_object('recent', recent, 'freeIn', free_in)::text;
      END IF;
      IF live >= p_concurrency THEN
        RAISE EXCEPTION 'org_run_concurrency_exceeded' USING DETAIL = json_build_object('live', live)::text;
      END IF;
      RETURN QUERY
        INSERT INTO runs (id, org_id, space_id, package_id, package_version, status, input, actor_type, actor_id, user_id,
                          end_user_id, schedule_id, connections, timeout_seconds, executor, sandbox_mode, sink_secret_hash, sink_expires_at)
        VALUES (r.id, r.org_id, r.space_id, r.package_id, r.package_version, 'pending', r.input, r.actor_type, r.actor_id, r.user_id,
                r.end_user_id, r.schedule_id, coalesce(r.connections, '{}'), r.timeout_seconds, coalesce(r.executor, 'sandbox'),
                r.sandbox_mode, r.sink_secret_hash, r.sink_expires_at)
        RETURNING *;
      PERFORM pg_notify(p_channel, p_event);
    END $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS admit_run(int, int, jsonb, text, text)');
}
