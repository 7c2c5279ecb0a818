// A launch that was accepted earlier but cannot start now (a scheduled tick: limits reached,
// agent gone, input no longer valid) is recorded as a terminal `failed` run (SPEC 3.1), so it
// shows in the run lists and produces `run.failed`.
import type { Knex } from 'knex';
import { notifyRunEnded } from '../notifications/create.ts';
import { notifyRunEvent } from './events.ts';
import type { LaunchRequest } from './launch.ts';

export interface RefusedRun extends Pick<LaunchRequest, 'orgId' | 'spaceId' | 'input' | 'actor' | 'userId' | 'scheduleId'> {
  /** Deterministic: recording the same refusal twice keeps one run. */
  id: string;
  packageId: string;
  version: string;
  timeoutSeconds: number;
  /** Why it could not start, for people. */
  error: string;
}

export async function insertRefusedRun(knex: Knex, r: RefusedRun): Promise<void> {
  // The run and its run.failed notification commit together.
  const inserted = await knex.transaction(async (trx) => {
    const rows = await trx('runs')
      .insert({
        id: r.id,
        org_id: r.orgId,
        space_id: r.spaceId,
        package_id: r.packageId,
        package_version: r.version,
        status: 'failed',
        input: JSON.stringify(r.input),
        error: r.error,
        actor_type: r.actor.type,
        actor_id: r.actor.id,
        user_id: r.userId,
        schedule_id: r.scheduleId ?? null,
        timeout_seconds: r.timeoutSeconds,
        finished_at: knex.fn.now(),
        refused: true, // not admitted: the launch rate leaves it out
      })
      .onConflict('id')
      .ignore()
      .returning(['id', 'org_id', 'space_id', 'user_id', 'schedule_id', 'status', 'error']);
    if (rows.length) {
      const pkg = await trx('packages').where({ id: r.packageId }).first('scope', 'name');
      await notifyRunEnded(trx, rows[0], pkg ? `${pkg.scope}/${pkg.name}` : r.packageId);
    }
    return rows;
  });
  if (inserted.length) await notifyRunEvent(knex, { kind: 'status', runId: r.id, orgId: r.orgId, spaceId: r.spaceId, status: 'failed' });
}
