// Writing a schedule row and its Temporal Schedule together (README.md, "One Temporal Schedule per
// row"): the row is the truth and Temporal follows it inside the row's transaction, so a spec the
// workflow service refuses leaves nothing written, and a commit that fails puts Temporal back.
// The API's schedule routes and the console's schedule pages both write here.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { problem } from '../errors.ts';
import { newId } from '../ids.ts';
import { creatorCanRun } from './access.ts';
import type { ScheduleRow } from './model.ts';
import { createTemporalSchedule, deleteTemporalSchedule, syncTemporalSchedule } from './temporal.ts';

/** A new schedule, its fields already checked (cron, time zone, input against the agent). */
export interface NewSchedule {
  orgId: string;
  spaceId: string;
  /** packages.id */
  packageId: string;
  /** The agent's '@scope/name' (the Temporal Schedule's search attribute). */
  agentName: string;
  name: string;
  cron: string;
  timezone: string;
  input: Record<string, unknown>;
  createdBy: string;
  createdWithKeyId: string | null;
}

export async function insertSchedule(knex: Knex, workflows: Client, s: NewSchedule): Promise<ScheduleRow> {
  const id = newId('sch');
  let temporalCreated = false;
  try {
    return await knex.transaction(async (trx) => {
      const [inserted] = (await trx('schedules')
        .insert({
          id,
          org_id: s.orgId,
          space_id: s.spaceId,
          package_id: s.packageId,
          name: s.name,
          cron_expression: s.cron,
          timezone: s.timezone,
          input: JSON.stringify(s.input),
          created_by: s.createdBy,
          created_with_key_id: s.createdWithKeyId,
        })
        .returning('*')) as ScheduleRow[];
      // Before the commit: a schedule the workflow service refuses leaves no row behind.
      await createTemporalSchedule(workflows, { ...inserted, packageId: s.agentName });
      temporalCreated = true;
      return inserted;
    });
  } catch (err) {
    if (temporalCreated) await deleteTemporalSchedule(workflows, id); // the commit failed
    throw err;
  }
}

/** What a change sets, each field already checked; `enabled` pauses (false) or resumes (true). */
export interface ScheduleChange {
  name?: string;
  cron_expression?: string;
  timezone?: string;
  input?: Record<string, unknown>;
  enabled?: boolean;
}

/**
 * Applies `change` to the schedule `id` of `orgId` (its agent `agentName`), the row locked for the
 * transaction so that a concurrent disable (access lost) or change never leaves Temporal out of
 * step with it. Resuming is 409 `schedule_creator_lost_access` when the creator can no longer run.
 */
export async function changeSchedule(
  knex: Knex,
  workflows: Client,
  target: Pick<ScheduleRow, 'id' | 'org_id'>,
  agentName: string,
  change: ScheduleChange,
): Promise<void> {
  let before: ScheduleRow | undefined; // the locked row, to put Temporal back if the commit fails
  let synced = false;
  try {
    await knex.transaction(async (trx) => {
      // Locked: a concurrent disable (access lost) or PATCH waits, so Temporal gets this row.
      before = (await trx('schedules').where({ id: target.id, org_id: target.org_id }).forUpdate().first()) as ScheduleRow | undefined;
      if (!before) throw problem('not_found', 'No such schedule');
      const patch: Partial<ScheduleRow> = {};
      if (change.name !== undefined) patch.name = change.name;
      if (change.cron_expression !== undefined) patch.cron_expression = change.cron_expression;
      if (change.timezone !== undefined) patch.timezone = change.timezone;
      if (change.input !== undefined) patch.input = change.input;
      if (change.enabled === true && !before.enabled) {
        if (!(await creatorCanRun(trx, before))) {
          throw problem(
            'schedule_creator_lost_access',
            'The person who created this schedule can no longer run agents in this space; create a new schedule instead',
          );
        }
        Object.assign(patch, { enabled: true, disabled_reason: null });
      }
      if (change.enabled === false && before.enabled) patch.enabled = false;
      await trx('schedules')
        .where({ id: before.id, org_id: before.org_id })
        .update({ ...patch, ...(patch.input ? { input: JSON.stringify(patch.input) } : {}), updated_at: trx.fn.now() });
      // Before the commit: a spec the workflow service refuses changes nothing.
      if (['cron_expression', 'timezone', 'enabled'].some((k) => k in patch)) {
        await syncTemporalSchedule(workflows, { ...before, ...patch, packageId: agentName });
        synced = true;
      }
    });
  } catch (err) {
    if (synced && before) await syncTemporalSchedule(workflows, { ...before, packageId: agentName }); // the commit failed: back to the row
    throw err;
  }
}
