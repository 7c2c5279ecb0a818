// Recording notifications (DESIGN.md section 7, issue 16). Each is written by the code that
// changes the state it reports, in the same transaction where there is one, and at most once per
// event: a unique `dedupe_key` (`<type>:<run id>` for runs, `<type>:<id>:<minute>` otherwise)
// absorbs the retry of an activity that already recorded it.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';

export const NOTIFICATION_TYPES = ['run.failed', 'run.timeout', 'schedule.disabled', 'connection.needs_reconnection'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export interface NotificationRow {
  id: string;
  org_id: string;
  space_id: string;
  user_id: string;
  type: NotificationType;
  title: string;
  body: string;
  run_id: string | null;
  schedule_id: string | null;
  connection_id: string | null;
  dedupe_key: string;
  read_at: Date | null;
  created_at: Date;
}

export interface NewNotification {
  orgId: string;
  spaceId: string;
  /** The recipient; none (null) records nothing. */
  userId: string | null;
  type: NotificationType;
  title: string;
  body: string;
  runId?: string | null;
  scheduleId?: string | null;
  connectionId?: string | null;
  /** Same key, same event: recorded once. */
  dedupeKey: string;
}

/** Records one notification; false when there is no recipient or it was recorded before. */
export async function recordNotification(knex: Knex, n: NewNotification): Promise<boolean> {
  if (!n.userId) return false;
  const inserted = await knex('notifications')
    .insert({
      id: newId('ntf'),
      org_id: n.orgId,
      space_id: n.spaceId,
      user_id: n.userId,
      type: n.type,
      title: n.title,
      body: n.body,
      run_id: n.runId ?? null,
      schedule_id: n.scheduleId ?? null,
      connection_id: n.connectionId ?? null,
      dedupe_key: n.dedupeKey,
    })
    .onConflict('dedupe_key')
    .ignore()
    .returning('id');
  return inserted.length > 0;
}

/** The minute of `at`, for the keys of events that may recur (a schedule disabled again later). */
function minuteOf(at: Date): string {
  return at.toISOString().slice(0, 16);
}

/**
 * A run ended `failed` or `timeout`: tells the person behind it (`runs.user_id`: the launching
 * user, an API key's creator, also when the key acted for an end-user, or a schedule's creator).
 */
export async function notifyRunEnded(
  knex: Knex,
  run: { id: string; org_id: string; space_id: string; user_id: string | null; schedule_id: string | null; status: string; error: string | null },
  agentName: string,
): Promise<boolean> {
  if (run.status !== 'failed' && run.status !== 'timeout') return false;
  const type = run.status === 'failed' ? 'run.failed' : 'run.timeout';
  const title = run.status === 'failed' ? `Run of ${agentName} failed` : `Run of ${agentName} timed out`;
  return recordNotification(knex, {
    orgId: run.org_id,
    spaceId: run.space_id,
    userId: run.user_id,
    type,
    title,
    body: `${run.schedule_id ? `The scheduled run ${run.id}` : `The run ${run.id}`} of ${agentName} ended ${run.status}: ${run.error ?? 'no reason given'}`,
    runId: run.id,
    scheduleId: run.schedule_id,
    dedupeKey: `${type}:${run.id}`,
  });
}

/** The service disabled a schedule: tells its creator (the person its runs execute as). */
export async function notifyScheduleDisabled(
  knex: Knex,
  schedule: { id: string; org_id: string; space_id: string; name: string; created_by: string },
  reason: string,
  at = new Date(),
): Promise<boolean> {
  return recordNotification(knex, {
    orgId: schedule.org_id,
    spaceId: schedule.space_id,
    userId: schedule.created_by,
    type: 'schedule.disabled',
    title: `Schedule "${schedule.name}" was disabled`,
    body: reason,
    scheduleId: schedule.id,
    dedupeKey: `schedule.disabled:${schedule.id}:${minuteOf(at)}`,
  });
}

/**
 * A connection was flagged `needs_reconnection`: tells its owner when that is a person. An
 * end-user's connection records nothing (end-users read no notifications, and the connection
 * names no person behind it).
 */
export async function notifyConnectionNeedsReconnection(
  knex: Knex,
  connection: { id: string; org_id: string; space_id: string; owner_type: string; owner_id: string; label: string; integration_package_id: string },
  reason: string,
  at = new Date(),
): Promise<boolean> {
  if (connection.owner_type !== 'user') return false;
  return recordNotification(knex, {
    orgId: connection.org_id,
    spaceId: connection.space_id,
    userId: connection.owner_id,
    type: 'connection.needs_reconnection',
    title: `Connection "${connection.label}" to ${connection.integration_package_id} needs reconnecting`,
    body: `The connection ${connection.id} stopped working (${reason}). Runs that need it are refused until you connect again with its connection_id.`,
    connectionId: connection.id,
    dedupeKey: `connection.needs_reconnection:${connection.id}:${minuteOf(at)}`,
  });
}
