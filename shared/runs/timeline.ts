// A run's timeline (DESIGN.md 10): one entry per step the run took (model call, tool call,
// `api_call`, MCP call, command), the same for `GET /api/runs/{id}/timeline` and the console's
// SVG. Steps come from the run's journal (`run_steps`: each answer the sidecar gave the runtime,
// in order, with when it began and a model call's usage, migration 028) and from its log:
//
// - A step's log lines are those written after the previous step ended and up to its own end
//   (steps run one after the other, and a step's effects are written in its own transaction, so
//   they carry its end time). A warn or error line of a tool kind there (`api_call`, `mcp_call`,
//   `command`) marks the step failed, with that line as its error.
// - A model call that failed is not journaled (a retry must make it again): the error line the
//   sidecar writes for it becomes a last, failed model step.
// - A running run's step in flight is not journaled yet either: it is shown `running`, as the
//   next tool call the last model answer asked for and the journal has not answered, else a
//   model call. (The file tools of an agent that does not run code are carried out by the
//   runtime and never journaled: while one runs it is shown as the call it precedes. An agent
//   that runs code journals its workspace tools, `bash` and the file tools, like any tool,
//   DESIGN.md 9.) A run that timed out or was cancelled in the middle of a step ends on that
//   step, failed with the run's error.
// - Each `api-call` a command's program makes (DESIGN.md 9) is a journal step of kind `program`,
//   recorded while the command runs, so before the command's own step: it is shown as a step of
//   kind `api_call` named `api-call` (the program, where the model's tool is `api_call`), failed
//   with its log line as the tool's would be. It answers no tool call of the model, so it is not
//   counted among the answered calls of the step in flight.
// - Steps journaled before migration 028 have no start: they are taken to start when the
//   previous step ended (or the run started), and model calls show no tokens.
import type { Knex } from 'knex';
import type { RunRow, RunUsage } from './model.ts';

export const TIMELINE_STEP_KINDS = ['model', 'tool', 'api_call', 'mcp', 'command'] as const;
export type TimelineStepKind = (typeof TIMELINE_STEP_KINDS)[number];
export type TimelineStepStatus = 'running' | 'ok' | 'error';

export interface TimelineStep {
  seq: number;
  kind: TimelineStepKind;
  name: string;
  startedAt: string;
  durationMs: number | null;
  status: TimelineStepStatus;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  error?: string;
}

/** Log kinds whose warn and error lines say their step failed. */
const FAILING_KINDS = ['api_call', 'mcp_call', 'command'];
/** The sidecar's line for a model call that failed (activities/sidecar/server.ts). */
const MODEL_FAILURE_KIND = 'model';

/** The kind a journaled step is shown as: tools by their name (MCP tools are `<server>__<tool>`), a program's `api-call` as `api_call`. */
export function stepKind(journalKind: string, name: string): TimelineStepKind {
  if (journalKind === 'model') return 'model';
  if (journalKind === 'program') return 'api_call';
  if (name === 'api_call') return 'api_call';
  if (name === 'bash') return 'command';
  if (name.includes('__')) return 'mcp';
  return 'tool';
}

/** What a program step is named: the command programs run, where the model's tool is `api_call`. */
const PROGRAM_STEP_NAME = 'api-call';

interface StepRow {
  seq: number;
  kind: 'model' | 'tool' | 'program';
  name: string;
  started_at: Date | null;
  usage: RunUsage | null;
  created_at: Date;
  /** Model steps: the tool names the answer asked for. */
  calls: string[] | null;
}

interface FailureLine {
  type: string;
  message: string;
  created_at: Date;
}

type TimelineRun = Pick<RunRow, 'id' | 'status' | 'started_at' | 'finished_at' | 'error'>;

/** The steps with `seq` > `since`, ascending, at most `limit`; `hasMore` while more follow. */
export async function runTimeline(knex: Knex, run: TimelineRun, since: number, limit: number): Promise<{ data: TimelineStep[]; hasMore: boolean }> {
  // The step at `since` itself too: the first step of the page may need its end as its start.
  const rows: StepRow[] = await knex('run_steps')
    .where({ run_id: run.id })
    .where('seq', '>=', since)
    .orderBy('seq')
    .limit(limit + 2)
    .select(
      'seq',
      'kind',
      'name',
      'started_at',
      'usage',
      'created_at',
      knex.raw(`case when kind = 'model' then jsonb_path_query_array(response, '$.message.tool_calls[*].function.name') end as calls`),
    );
  const before = rows[0]?.seq === since ? rows.shift() : undefined;
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const from = before?.created_at ?? run.started_at ?? page[0]?.started_at ?? page[0]?.created_at;
  const failures: FailureLine[] = from
    ? await knex('run_logs')
        .where({ run_id: run.id })
        .whereIn('level', ['warn', 'error'])
        .whereIn('type', [...FAILING_KINDS, MODEL_FAILURE_KIND])
        .where('created_at', '>', from)
        .orderBy('seq')
        .limit(10_000)
        .select('type', 'message', 'created_at')
    : [];

  const data: TimelineStep[] = [];
  let previousEnd = from;
  for (const row of page) {
    const start = row.started_at ?? previousEnd ?? row.created_at;
    const failure = failures.find((f) => FAILING_KINDS.includes(f.type) && f.created_at > (previousEnd ?? start) && f.created_at <= row.created_at);
    const step: TimelineStep = {
      seq: row.seq,
      kind: stepKind(row.kind, row.name),
      name: row.kind === 'program' ? PROGRAM_STEP_NAME : row.name,
      startedAt: start.toISOString(),
      durationMs: Math.max(0, row.created_at.getTime() - start.getTime()),
      status: failure && row.kind !== 'model' ? 'error' : 'ok',
    };
    if (row.kind === 'model' && row.usage)
      Object.assign(step, { inputTokens: row.usage.inputTokens, outputTokens: row.usage.outputTokens, costUsd: row.usage.costUsd });
    if (step.status === 'error') step.error = failure!.message;
    data.push(step);
    previousEnd = row.created_at;
  }
  if (!hasMore) {
    // The journal holds every step up to here: what follows is the step that failed or is under way.
    const all = before ? [before, ...page] : page;
    const last = all[all.length - 1];
    const tail = trailingStep(run, all, previousEnd, failures, last?.seq ?? since);
    if (tail && tail.seq > since) data.push(tail);
  }
  return { data, hasMore };
}

/** The step after the journal's last one: a failed model call, the step in flight, or the step a timeout or cancel cut. */
function trailingStep(run: TimelineRun, rows: StepRow[], lastEnd: Date | null | undefined, failures: FailureLine[], lastSeq: number): TimelineStep | undefined {
  if (!lastEnd) return undefined;
  const seq = lastSeq + 1;
  const lastModel = [...rows].reverse().find((r) => r.kind === 'model');
  const modelFailure = failures.find((f) => f.type === MODEL_FAILURE_KIND && f.created_at > lastEnd);
  if (modelFailure) {
    return {
      seq,
      kind: 'model',
      name: lastModel?.name ?? 'model',
      startedAt: lastEnd.toISOString(),
      durationMs: Math.max(0, modelFailure.created_at.getTime() - lastEnd.getTime()),
      status: 'error',
      error: modelFailure.message,
    };
  }
  const next = stepInFlight(rows, lastModel);
  if (run.status === 'running') return { seq, ...next, startedAt: lastEnd.toISOString(), durationMs: null, status: 'running' };
  const cut = (run.status === 'timeout' || run.status === 'cancelled') && run.finished_at && rows[rows.length - 1]?.name !== 'output';
  if (!cut) return undefined;
  return {
    seq,
    ...next,
    startedAt: lastEnd.toISOString(),
    durationMs: Math.max(0, run.finished_at!.getTime() - lastEnd.getTime()),
    status: 'error',
    error: run.error ?? `The run ended ${run.status}`,
  };
}

/** What the runtime asked for after the journal's last step: the next unanswered tool call, else a model call. */
function stepInFlight(rows: StepRow[], lastModel: StepRow | undefined): { kind: TimelineStepKind; name: string } {
  if (!lastModel) return { kind: 'model', name: 'model' };
  const answered = rows.filter((r) => r.seq > lastModel.seq && r.kind !== 'program').length;
  const pending = (lastModel.calls ?? []).slice(answered);
  if (pending.length) return { kind: stepKind('tool', pending[0]), name: pending[0] };
  return { kind: 'model', name: lastModel.name };
}

/** The published shape of one step. */
export const timelineStepSchema = {
  type: 'object',
  required: ['seq', 'kind', 'name', 'startedAt', 'durationMs', 'status'],
  properties: {
    seq: { type: 'integer', minimum: 1, description: "The step's number in its run, from 1: the cursor pages go by (`since=<seq>`)" },
    kind: {
      enum: [...TIMELINE_STEP_KINDS],
      description:
        "`model` a model call; `tool` a runtime tool (`output`, `log`, `note`, `pin`, ...); `api_call`, `mcp` (an MCP server's tool), `command` (`bash`)",
    },
    name: { type: 'string', description: "The model's name, or the tool's (`<server>__<tool>` for MCP tools)" },
    startedAt: { type: 'string', format: 'date-time' },
    durationMs: { type: ['integer', 'null'], description: 'null while the step runs' },
    status: { enum: ['running', 'ok', 'error'] },
    inputTokens: { type: 'integer', description: 'Model steps' },
    outputTokens: { type: 'integer', description: 'Model steps' },
    costUsd: { type: 'number', description: 'Model steps, USD' },
    error: { type: 'string', description: "Failed steps: what went wrong (the log line that said so, or the run's error)" },
  },
} as const;
