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

export async function notifyRunEvent(knex: Knex, event: RunEvent): Promise<void> {
  await knex.raw('select pg_notify(?, ?)', [RUN_EVENTS_CHANNEL, JSON.stringify(event)]);
}
