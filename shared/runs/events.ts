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

export async function notifyRunEvent(knex: Knex, event: RunEvent): Promise<void> {
  await knex.raw('select pg_notify(?, ?)', [RUN_EVENTS_CHANNEL, runEventPayload(event)]);
}
