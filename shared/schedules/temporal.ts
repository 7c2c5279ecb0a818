// The Temporal Schedule behind each schedule row (DESIGN.md section 2): same id, cron in the
// row's IANA time zone, action = start `scheduledRun` on `agent-runs` (temporal/starters/
// scheduled-run.ts). Fire times, including `next_run_at`, come from Temporal alone.
import { type Client, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { problem } from '../errors.ts';
import { OrgIdKey, PackageIdKey, SpaceIdKey } from '../../temporal/search-attributes.ts';
import { scheduledRunAction } from '../../temporal/starters/scheduled-run.ts';
import type { ScheduleRow } from './model.ts';

/** What the Temporal Schedule is made of: the row, and its agent's '@scope/name'. */
export type Definition = Pick<ScheduleRow, 'id' | 'org_id' | 'space_id' | 'cron_expression' | 'timezone' | 'enabled' | 'disabled_reason'> & {
  packageId: string;
};

function definition(row: Definition) {
  // Operators find a schedule and its ticks in the Temporal UI by the attributes runs carry.
  const typedSearchAttributes = [
    { key: OrgIdKey, value: row.org_id },
    { key: SpaceIdKey, value: row.space_id },
    { key: PackageIdKey, value: row.packageId },
  ];
  return {
    typedSearchAttributes,
    spec: { cronExpressions: [row.cron_expression], timezone: row.timezone },
    action: scheduledRunAction(row.id, typedSearchAttributes),
    // Each tick only launches a run and ends, so ticks never wait on one another; a tick missed
    // during an outage still fires within five minutes, older ones are dropped.
    policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL, catchupWindow: '5 minutes' },
    state: { paused: !row.enabled, note: row.disabled_reason ?? undefined },
  };
}

/** A spec the server refuses (a cron or zone our checks let through) is the caller's 400. */
function specProblem(err: unknown): unknown {
  // The SDK turns "Invalid schedule spec" into a TypeError; other INVALID_ARGUMENTs (gRPC 3) stay wrapped.
  const invalidArgument = err instanceof TypeError || (err as { cause?: { code?: number } }).cause?.code === 3;
  if (!invalidArgument) return err;
  const field = /time ?zone/i.test((err as Error).message) ? 'timezone' : 'cron_expression';
  const message = `${field}: the workflow service refused the schedule: ${(err as Error).message}`;
  return problem('validation_failed', { detail: message, errors: [{ field, code: 'invalid_value', message }] });
}

export async function createTemporalSchedule(workflows: Client, row: Definition): Promise<void> {
  try {
    await workflows.schedule.create({ scheduleId: row.id, ...definition(row) });
  } catch (err) {
    throw specProblem(err);
  }
}

/** Makes the Temporal Schedule match the row: spec, paused state and note. */
export async function syncTemporalSchedule(workflows: Client, row: Definition): Promise<void> {
  try {
    await workflows.schedule.getHandle(row.id).update(() => definition(row));
  } catch (err) {
    throw specProblem(err);
  }
}

export async function pauseTemporalSchedule(workflows: Client, id: string, note: string): Promise<void> {
  try {
    await workflows.schedule.getHandle(id).pause(note);
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

export async function deleteTemporalSchedule(workflows: Client, id: string): Promise<void> {
  try {
    await workflows.schedule.getHandle(id).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/** The next fire time as Temporal computes it; null when disabled, paused or never again. */
export async function nextRunAt(workflows: Client, row: Pick<ScheduleRow, 'id' | 'enabled'>): Promise<Date | null> {
  if (!row.enabled) return null;
  try {
    const d = await workflows.schedule.getHandle(row.id).describe();
    return d.state.paused ? null : (d.info.nextActionTimes[0] ?? null);
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  }
}
