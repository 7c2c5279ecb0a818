// A schedule runs as its creator (SPEC 2.8): while they are a member of the organization and
// hold `agents:run` in the schedule's space. When that ends the schedule is disabled with a
// readable reason, eagerly when a membership changes and again at every tick.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { findSpace, orgRole, spaceScopes } from '../identity/tenancy.ts';
import { notifyScheduleDisabled } from '../notifications/create.ts';
import type { ScheduleRow } from './model.ts';
import { pauseTemporalSchedule } from './temporal.ts';

type Owned = Pick<ScheduleRow, 'org_id' | 'space_id' | 'created_by'>;

export async function creatorCanRun(knex: Knex, s: Owned): Promise<boolean> {
  const role = await orgRole(knex, s.org_id, s.created_by);
  const space = role && (await findSpace(knex, s.org_id, s.space_id));
  if (!space) return false;
  return (await spaceScopes(knex, s.created_by, space, role))?.has('agents:run') ?? false;
}

export async function lostAccessReason(knex: Knex, s: Owned, at = new Date()): Promise<string> {
  const user = await knex('users').where({ id: s.created_by }).first('email', 'name');
  const who = user ? `${user.name} (${user.email})` : s.created_by;
  return `Disabled on ${at.toISOString()}: ${who}, who created it, no longer has access to run agents in this space`;
}

/**
 * Disables the schedule (the row is the truth) and pauses its Temporal Schedule with the reason
 * as note. Also what deleting a connection a schedule uses will call. The pause is best effort:
 * a tick of a disabled row pauses the schedule again and starts nothing.
 */
export async function disableSchedule(knex: Knex, workflows: Client, id: string, reason: string): Promise<void> {
  // The row and its creator's schedule.disabled notification commit together (a savepoint when
  // the caller's `knex` is already a transaction, as when a connection is deleted).
  await knex.transaction(async (trx) => {
    const [row] = (await trx('schedules')
      .where({ id, enabled: true })
      .update({ enabled: false, disabled_reason: reason, updated_at: knex.fn.now() })
      .returning('*')) as ScheduleRow[];
    if (row) await notifyScheduleDisabled(trx, row, reason);
  });
  await pauseTemporalSchedule(workflows, id, reason).catch(() => undefined);
}

/** After `userId` lost a membership or a role in `orgId`: disables their schedules they can no longer run. */
export async function recheckScheduleAccess(knex: Knex, workflows: Client, orgId: string, userId: string): Promise<void> {
  const rows = (await knex('schedules').where({ org_id: orgId, created_by: userId, enabled: true })) as ScheduleRow[];
  for (const row of rows) {
    if (!(await creatorCanRun(knex, row))) await disableSchedule(knex, workflows, row.id, await lostAccessReason(knex, row));
  }
}
