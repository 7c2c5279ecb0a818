// Run changes and new log entries are announced on one Postgres channel; each API process
// LISTENs once and wakes its long-poll waiters (and, later, SSE subscribers).
import type { Knex } from 'knex';

export const RUN_EVENTS_CHANNEL = 'run_events';

export interface RunEvent {
  kind: 'status' | 'log' | 'usage';
  runId: string;
  orgId: string;
  spaceId: string;
  status?: string;
  seq?: number;
}

/** The payload announcing `event` (also sent by migration 022's admit_run, given it). */
export function runEventPayload(event: RunEvent): string {
  return JSON.stringify(event);
}

/**
 * `pg_notify` of a run event as SQL, for a statement that writes a change and announces it at
 * once (sent at commit): the payload of `runEventPayload`, built from the statement's own rows.
 * `channel`: the statement's placeholder for RUN_EVENTS_CHANNEL; `runId`: the SQL of the run's id
 * as text; the organization and space are the rows' `org_id` and `space_id`; `own`: the SQL of the
 * kind's own field (a log line's `seq`, a change's `status`).
 */
export function runEventNotifySql(channel: string, kind: RunEvent['kind'], runId: string, own?: { seq: string } | { status: string }): string {
  const field = own ? Object.entries(own).map(([name, sql]) => `, '${name}', ${sql}`)[0] : '';
  return `pg_notify(${channel}, json_build_object('kind', '${kind}', 'runId', ${runId}, 'orgId', org_id, 'spaceId', space_id${field})::text)`;
}

export async function notifyRunEvent(knex: Knex, event: RunEvent): Promise<void> {
  await knex.raw('select pg_notify(?, ?)', [RUN_EVENTS_CHANNEL, runEventPayload(event)]);
}
