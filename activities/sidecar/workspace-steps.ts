// The sidecar's side of the workspace tools (DESIGN.md 9; workspace-tools.ts): the runtime
// announces each call (LocalBegin) and hands its result back (LocalEnd); a command's programs
// call `api-call` meanwhile. For a run, each call is a step of its journal (journal.ts), recorded
// with its effects (a command's log line) in one statement, so a resumed run answers a call an
// earlier attempt completed without carrying it out again; each `api-call` is a `program` step
// keyed by the command (the model's id of the bash call) and its ordinal within it, so a command
// that runs again after a worker loss gets the answers of the calls it had made. A chat turn
// journals nothing (a lost turn starts over) and has no integrations to call.
//
// A call that may have changed the workspace is checkpointed (sandbox/checkpoints.ts) before its
// step is recorded, and the step names the checkpoint (its seq): a step is never recorded
// without its checkpoint, so a resume finds the workspace as of its last completed step.
import type { Knex } from 'knex';
import type { LogEntryInput } from '../../shared/runs/logs.ts';
import type { WorkspaceCheckpoints } from '../sandbox/checkpoints.ts';
import type { RunJournal } from './journal.ts';
import {
  type LocalBegin,
  type LocalBeginAnswer,
  type LocalEnd,
  type ProgramApiAnswer,
  type ProgramApiCall,
  SIDECAR_PATHS,
  type ToolResult,
} from './protocol.ts';
import { commandLogEntry, WORKSPACE_CHANGING_TOOLS, WORKSPACE_TOOL_NAMES } from './workspace-tools.ts';

export interface WorkspaceStepsDeps {
  /**
   * A run's: where its steps are recorded and their log lines written, and its workspace
   * checkpointed (absent with RUN_CHECKPOINTS=false: no resume). Absent for a chat turn.
   */
  run?: { id: string; knex: Knex; journal: RunJournal; checkpoints?: WorkspaceCheckpoints };
  /** When the run or turn ends (epoch ms): a command's timeout is at most the time left. */
  deadline(): number | undefined;
  /** Carries out one `api-call` (api-call.ts, apiCallForProgram); its log lines go to `logs`. Absent: none can be made. */
  apiCall?: (call: ProgramApiCall, logs: LogEntryInput[]) => Promise<ProgramApiAnswer>;
  /** Why `api-call` cannot be used here, when `apiCall` is absent. */
  noApiCall: string;
}

export class WorkspaceSteps {
  private readonly deps: WorkspaceStepsDeps;
  /** The bash call running now, and how many `api-call`s it has made. */
  private command?: { id: string; calls: number };
  /** When each call in progress began (the run timeline shows it). */
  private readonly began = new Map<string, Date>();

  constructor(deps: WorkspaceStepsDeps) {
    this.deps = deps;
  }

  /**
   * The answer to a request on one of the workspace paths, or undefined for any other path.
   * `serially` orders it with the sidecar's other steps (the journal's order is the runtime's).
   */
  route(method: string | undefined, url: string, body: any, serially: <T>(step: () => Promise<T>) => Promise<T>): Promise<unknown> | undefined {
    if (method !== 'POST') return undefined;
    if (url === SIDECAR_PATHS.localBegin) return serially(async () => this.begin(body));
    if (url === SIDECAR_PATHS.localEnd) return serially(() => this.end(body));
    if (url === SIDECAR_PATHS.apiCall) return serially(() => this.apiCall(body));
    return undefined;
  }

  private begin(body: LocalBegin): LocalBeginAnswer {
    const name = String(body.name);
    if (!WORKSPACE_TOOL_NAMES.includes(name)) return { result: { content: `Unknown tool "${name}"` } };
    const replayed = this.deps.run?.journal.replay('tool', name, { id: body.id, arguments: body.arguments });
    if (replayed) return { result: replayed.response as ToolResult };
    this.began.set(body.id, new Date());
    if (name === 'bash') this.command = { id: body.id, calls: 0 };
    const deadline = this.deps.deadline();
    return deadline === undefined ? {} : { timeoutMs: Math.max(1, deadline - Date.now()) };
  }

  private async end(body: LocalEnd): Promise<ToolResult> {
    const result: ToolResult = { content: String(body.content ?? '') };
    if (this.command?.id === body.id) this.command = undefined;
    const startedAt = this.began.get(body.id);
    this.began.delete(body.id);
    const run = this.deps.run;
    if (!run) return result;
    const logs = body.name === 'bash' ? [commandLogEntry(body.arguments, result.content)] : [];
    // Stored before the step that claims it (named after its seq: the steps are serial).
    const checkpoint = WORKSPACE_CHANGING_TOOLS.includes(body.name) ? await run.checkpoints?.take(run.journal.nextSeq) : undefined;
    if (checkpoint) logs.push(...checkpoint.logs);
    await run.journal.record('tool', String(body.name), { id: body.id, arguments: body.arguments }, result, { logs }, { startedAt });
    if (checkpoint) run.checkpoints!.settle(checkpoint);
    return result;
  }

  private async apiCall(body: ProgramApiCall): Promise<ProgramApiAnswer> {
    const command = this.command;
    if (!command || body.command !== command.id) return { refused: 'api-call works only in a command the agent runs with its bash tool, while it runs' };
    if (!this.deps.apiCall) return { refused: this.deps.noApiCall };
    const { command: _id, ...call } = body;
    const request = { key: `${command.id}#${++command.calls}`, call };
    const run = this.deps.run;
    const replayed = run?.journal.replayProgram('api_call', request);
    if (replayed) return replayed.response as ProgramApiAnswer;
    const logs: LogEntryInput[] = [];
    const startedAt = new Date();
    const answer = await this.deps.apiCall(body, logs);
    if (run) {
      await run.journal.record('program', 'api_call', request, answer, { logs }, { startedAt });
    }
    return answer;
  }
}
