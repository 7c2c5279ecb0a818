// A run's log: appending entries, and their wire shape (DESIGN.md 5, "Log entry"), the same in
// GET /api/runs/{id}/logs, the MCP tool get_run_logs and SSE `run_log` frames.
import type { Knex } from 'knex';
import { RUN_EVENTS_CHANNEL, runEventNotifySql } from './events.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface LogEntryInput {
  level: LogLevel;
  /** Our finer category (`agent`, `output`, `model`, `status`, ...): the entry's `kind` on the wire (the column keeps its first name). */
  type: string;
  message: string;
  data?: unknown;
}

/**
 * Appends one entry with the run's next sequence number (atomic per run) and announces it (the
 * payload of `runEventPayload`, sent at commit). One statement: inside a caller's transaction
 * (a journal step's effects) it adds one round trip to Postgres, where a transaction of its own
 * (a savepoint there) took five.
 */
/** A log line's message is cut at this many characters (UTF-16 code units). */
export const MAX_LOG_MESSAGE = 10_000;

export async function appendRunLog(knex: Knex, runId: string, entry: LogEntryInput): Promise<number> {
  const {
    rows: [run],
  } = await knex.raw(
    `with run as (
       update runs set log_seq = log_seq + 1 where id = :runId returning log_seq, org_id, space_id
     ), logged as (
       insert into run_logs (run_id, seq, level, type, message, data)
       select :runId, log_seq, :level, :type, :message, cast(:data as jsonb) from run
     )
     select log_seq,
            ${runEventNotifySql(':channel', 'log', 'cast(:runId as text)', { seq: 'log_seq' })}
       from run`,
    {
      runId,
      level: entry.level,
      type: entry.type,
      message: entry.message.slice(0, MAX_LOG_MESSAGE),
      data: entry.data === undefined ? null : JSON.stringify(entry.data),
      channel: RUN_EVENTS_CHANNEL,
    },
  );
  if (!run) throw new Error(`run ${runId} does not exist`);
  return run.log_seq as number;
}

/** The `type`/`event` pairs that clients of this interface (Appstrate's CLI and console) render. */
type ClientPair = ['progress', 'progress'] | ['result', 'output'] | ['system', 'adapter_error'] | ['system', 'run_completed'];

/** Kinds that record a tool call, and the tool each names in `data.tool` (an MCP call's data names its own tool). */
const TOOL_OF_KIND: Readonly<Record<string, string>> = { api_call: 'api_call', mcp_call: 'mcp', note: 'note', pin: 'pin', command: 'bash' };

/** The one status line that does not end the run (activities/run-state.ts writes it). */
const RUN_STARTED = 'Run started';

/**
 * The pair a client renders for an entry of this kind and level (table in shared/runs/README.md):
 * the agent's own lines and tool calls are progress whatever their level; any other line at
 * level error is a runtime error; the status line that ends the run closes it.
 */
export function clientPair(kind: string, level: string, message: string): ClientPair {
  if (kind === 'output') return ['result', 'output'];
  if (kind === 'status') return message === RUN_STARTED ? ['progress', 'progress'] : ['system', 'run_completed'];
  if (kind === 'agent' || Object.hasOwn(TOOL_OF_KIND, kind)) return ['progress', 'progress'];
  return level === 'error' ? ['system', 'adapter_error'] : ['progress', 'progress'];
}

/** What an entry carries in `data`: tool calls name their tool; the output entry carries the output. */
function entryData(kind: string, stored: unknown, output: { value: unknown } | undefined): unknown {
  if (kind === 'output') return stored ?? output?.value ?? null;
  if (!Object.hasOwn(TOOL_OF_KIND, kind)) return stored;
  const tool = TOOL_OF_KIND[kind];
  const fields = stored !== null && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Record<string, unknown>) : {};
  return { tool, ...fields };
}

export interface LogRow {
  run_id: string;
  seq: number;
  level: string;
  /** The entry's kind (see LogEntryInput). */
  type: string;
  message: string;
  data: unknown;
  created_at: Date;
}

/**
 * The wire shape of an entry. `withData`: SSE frames carry `data` only when verbose (SPEC 6.4).
 * `output`: the run's output once it has one, for an output entry written without it.
 */
export function logDto(row: LogRow, withData: boolean, output?: { value: unknown }) {
  const [type, event] = clientPair(row.type, row.level, row.message);
  const data = withData ? entryData(row.type, row.data, output) : null;
  return {
    object: 'run_log' as const,
    id: row.seq,
    seq: row.seq,
    runId: row.run_id,
    level: row.level,
    type,
    event,
    kind: row.type,
    message: row.message,
    ...(data !== null && data !== undefined ? { data } : {}),
    createdAt: row.created_at.toISOString(),
  };
}

/** The published shape of an entry; `dataNote` says when `data` is present. */
export function runLogSchema(dataNote: string) {
  return {
    type: 'object',
    required: ['object', 'id', 'seq', 'runId', 'level', 'type', 'event', 'kind', 'message', 'createdAt'],
    properties: {
      object: { const: 'run_log' },
      id: { type: 'integer', description: 'Equals `seq`: the cursor clients page by (`since=<id>`)' },
      seq: { type: 'integer', description: "The entry's number in its run, from 1; read what a reconnect missed with GET /api/runs/{id}/logs?since=" },
      runId: { type: 'string', pattern: '^run_' },
      level: { enum: ['debug', 'info', 'warn', 'error'] },
      type: {
        enum: ['progress', 'result', 'system'],
        description:
          "With `event`, what clients render: `progress`/`progress` (an agent's log line or a tool call, `data.tool` naming the tool), " +
          '`result`/`output` (the output, in `data`), `system`/`adapter_error` (a runtime error), `system`/`run_completed` (the line ' +
          'that ends the run)',
      },
      event: { enum: ['progress', 'output', 'adapter_error', 'run_completed'] },
      kind: {
        type: 'string',
        description:
          'Our finer category: `agent`, `output`, `model`, `status`, `files`, `resume`, `command`, `api_call`, `mcp`, `mcp_call`, `note`, `pin`, `runner`, ...',
      },
      message: { type: 'string' },
      data: { description: dataNote },
      createdAt: { type: 'string', format: 'date-time' },
    },
  };
}
