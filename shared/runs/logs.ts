import type { Knex } from 'knex';
import { notifyRunEvent } from './events.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface LogEntryInput {
  level: LogLevel;
  type: string;
  message: string;
  data?: unknown;
}

/** Appends one entry with the run's next sequence number (atomic per run) and announces it. */
export async function appendRunLog(knex: Knex, runId: string, entry: LogEntryInput): Promise<number> {
  return knex.transaction(async (trx) => {
    const [run] = await trx('runs').where({ id: runId }).increment('log_seq', 1).returning(['log_seq', 'org_id', 'space_id']);
    if (!run) throw new Error(`run ${runId} does not exist`);
    await trx('run_logs').insert({
      run_id: runId,
      seq: run.log_seq,
      level: entry.level,
      type: entry.type,
      message: entry.message.slice(0, 10_000),
      data: entry.data === undefined ? null : JSON.stringify(entry.data),
    });
    await notifyRunEvent(trx, { kind: 'log', runId, orgId: run.org_id, spaceId: run.space_id, seq: run.log_seq });
    return run.log_seq as number;
  });
}

export function logDto(row: { seq: number; level: string; type: string; message: string; data: unknown; created_at: Date }, withData: boolean) {
  return {
    object: 'run_log' as const,
    seq: row.seq,
    level: row.level,
    type: row.type,
    message: row.message,
    ...(withData && row.data !== null ? { data: row.data } : {}),
    createdAt: row.created_at.toISOString(),
  };
}
