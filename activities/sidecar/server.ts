// The sidecar (DESIGN.md section 3): one per run, in the worker, on a unix socket that is the
// sandbox's only way out. It holds what the runtime must never see (the model key, the
// database) and carries out the runtime tools.
import http from 'node:http';
import { context, type Tracer } from '@opentelemetry/api';
import type { Knex } from 'knex';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../shared/log.ts';
import type { ModelConfig } from '../../shared/models/resolve.ts';
import type { ResolvedAgent } from '../../shared/packages/resolve-agent.ts';
import { appendRunLog, type LogEntryInput, type LogLevel } from '../../shared/runs/logs.ts';
import type { RunRow } from '../../shared/runs/model.ts';
import { renderRunPrompt } from '../run-prompt.ts';
import { WorkspaceNotCheckpointed, type WorkspaceCheckpoints } from '../sandbox/checkpoints.ts';
import { skillPath } from '../sandbox/skills.ts';
import { type ApiCallContext, type ApiIntegration, apiCall, apiCallForProgram, apiCallTool } from './api-call.ts';
import type { RunFilesInfo } from '../run-files.ts';
import { fileToolsOf, localToolNames } from './file-tools.ts';
import { AttemptSuperseded, JournalMismatch, type RunJournal } from './journal.ts';
import type { McpTools } from './mcp-tools.ts';
import { type ChatMessage, type ModelAnswer, type RunSpec, SIDECAR_PATHS, type ToolResult } from './protocol.ts';
import { complete, ModelCallError, type ToolDef } from './providers.ts';
import { WorkspaceSteps } from './workspace-steps.ts';
import { runsCode, workspacePrompt } from './workspace-tools.ts';
import { sandboxStart } from '../../shared/observability/metrics.ts';
import { inSpan } from '../../shared/observability/context.ts';

export interface SidecarState {
  output?: { value: unknown };
  /** Why the run cannot go on (a model provider error, ...): becomes the run's error. */
  fatalError?: string;
  /** Model calls this attempt sent (answers replayed from the journal are not counted). */
  modelCalls: number;
  /** Another attempt recorded a step first (journal.ts, AttemptSuperseded): this one ends silently. */
  superseded?: boolean;
  /** Why this attempt ends and another goes on with the run (its workspace could not be checkpointed). */
  retry?: string;
}

export interface SidecarDeps {
  knex: Knex;
  log: Logger;
  /** Answers earlier attempts of this run already got, and where new ones are recorded. */
  journal: RunJournal;
  dispatcher: Dispatcher;
  maxRequestBytes: number;
  /** The run's MCP server tools (mcp-tools.ts), offered after the runtime tools. */
  mcp?: McpTools;
  /** What `api_call` needs of the worker's config (the secrets key stays in the worker). */
  delivery?: ApiCallContext['config'];
  /** Model call spans, children of the executeAgent activity's span (the context the sidecar was made in). */
  tracer?: Tracer;
  /** The workspace's checkpoints of an agent that runs code (sandbox/checkpoints.ts); absent: none are taken. */
  checkpoints?: WorkspaceCheckpoints;
  /** Stops the sandbox of an attempt that must end now (superseded, or `retry`): its runtime must ask nothing more. */
  stopSandbox?: () => void;
  /**
   * Settles once the run's start is written (execute-agent.ts, `startRun`), which the sandbox does
   * not wait for: the first step waits for it, so nothing the agent does is recorded (no log line,
   * no model call) before the run is `running`.
   */
  started?: Promise<unknown>;
}

export interface SidecarRun {
  run: RunRow;
  agent: ResolvedAgent;
  model: ModelConfig;
  pins: string[];
  actorKey: string;
  /** Integrations that offer `api_call` to this run (see api-call.ts); none when absent. */
  apiIntegrations?: ApiIntegration[];
  /** The run's files as the sandbox sees them (activities/run-files.ts). */
  files?: RunFilesInfo;
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'];
const MAX_TURNS = 50;

/**
 * `finish`: how the agent ends its work (a run calls `output`; a chat turn answers in text).
 * `workspace`, for an agent that runs code: whether output/ is returned (a run's is), and the
 * integrations `api-call` reaches.
 */
export function systemPrompt(
  agent: ResolvedAgent,
  pins: string[],
  files: ToolDef[] = [],
  finish = 'When you are done, call the `output` tool with the result; its arguments are the result object itself.',
  workspace: { returned: boolean; integrations: string[] } = { returned: true, integrations: [] },
): string {
  const parts = [agent.prompt.trim()];
  const code = files.some((t) => t.name === 'bash');
  if (agent.skills.length) {
    // With a shell, a skill's other files (scripts/, references/, ...) are there to use: where.
    const where = (id: string) => (code ? `Its files: ${skillPath(id)}/ (read-only; SKILL.md and what it refers to)\n\n` : '');
    parts.push('# Skills', ...agent.skills.map((s) => `## ${s.name}\n${s.description ? `${s.description}\n\n` : ''}${where(s.id)}${s.content.trim()}`));
  }
  if (pins.length) parts.push('# Pinned notes from earlier runs', pins.map((p) => `- ${p}`).join('\n'));
  if (code) parts.push(workspacePrompt(workspace));
  else if (files.some((t) => t.name === 'read_file')) {
    parts.push('Input files are under /workspace/input (read-only): the input names their paths. Read them with `read_file`.');
  }
  if (!code && files.some((t) => t.name === 'write_file')) parts.push('Files you write with `write_file` (under /workspace/output) are returned with the run.');
  parts.push(finish);
  return parts.join('\n\n');
}

export function toolDefs(agent: ResolvedAgent, apiIntegrations: ApiIntegration[] = []): ToolDef[] {
  const tools: ToolDef[] = [
    {
      name: 'output',
      description: "Finish the run with its result. The arguments are the result object itself and must match the agent's output schema.",
      parameters: agent.outputSchema ?? { type: 'object' },
    },
  ];
  const offered = new Set(agent.runtimeTools);
  if (offered.has('log')) {
    tools.push({
      name: 'log',
      description: "Write a line to the run's log.",
      parameters: {
        type: 'object',
        required: ['level', 'message'],
        properties: { level: { enum: LOG_LEVELS }, message: { type: 'string' } },
      },
    });
  }
  if (offered.has('note')) {
    tools.push({
      name: 'note',
      description: 'Remember something about this run for the people who launched it.',
      parameters: { type: 'object', required: ['content'], properties: { content: { type: 'string' } } },
    });
  }
  if (offered.has('pin')) {
    tools.push({
      name: 'pin',
      description: 'Pin a fact for later runs of this agent by the same actor: it is shown in their system prompt.',
      parameters: { type: 'object', required: ['content'], properties: { content: { type: 'string' } } },
    });
  }
  tools.push(...fileToolsOf(agent));
  const api = apiCallTool(apiIntegrations);
  if (api) tools.push(api);
  return tools;
}

/** A request body over the sidecar's limit: answered 413 once the whole request has arrived. */
export class RequestTooLarge extends Error {}

/**
 * The request's JSON body. One over `limit` bytes is read to its end without being kept and
 * rejected with RequestTooLarge, so the runtime gets a 413 to read instead of a closed socket.
 */
export function readBody(req: http.IncomingMessage, limit: number): Promise<any> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
    });
    req.on('end', () => {
      if (size > limit) return reject(new RequestTooLarge(`The request to the sidecar is over ${limit} bytes`));
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {});
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

/** What the sidecar answers a request that failed: 413 for one too large, else 500. */
export function sendFailure(res: http.ServerResponse, err: unknown): void {
  if (!res.headersSent) send(res, err instanceof RequestTooLarge ? 413 : 500, { error: (err as Error).message });
}

/** A JSON answer with its length stated: the runtime reads bodies by length, never chunked (agent-runtime/main.ts). */
export function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A run's sidecar: served to its sandbox by the run's session (sandbox/session.ts). */
export class Sidecar {
  readonly state: SidecarState;
  readonly server: http.Server;
  private readonly abort = new AbortController();
  private readonly tools: ToolDef[];
  private readonly deps: SidecarDeps;
  private readonly spec: SidecarRun;
  /** Model and tool steps one after the other: the journal's order is the runtime's. */
  private steps: Promise<unknown> = Promise.resolve();
  private readonly handling = new Set<Promise<void>>();
  /** The trace context it was made in (executeAgent's): its requests arrive outside it. */
  private readonly traceContext = context.active();
  /** When it began listening for the sandbox, until the runtime's first request (agent_sandbox_start_seconds). */
  private listeningAt?: number;
  /** The workspace tools' steps, for an agent that runs code (workspace-steps.ts). */
  private readonly workspace?: WorkspaceSteps;
  /** When the run times out (epoch ms): a command runs no longer. */
  private endsAt?: number;
  /** The tools the model's last answer called, in order: what the runtime still asks for. */
  private lastCalls: string[] = [];
  private finish!: () => void;
  /**
   * Resolves once the agent's output is recorded as the last call of the model's last answer:
   * the runtime asks nothing more and ends (agent-runtime/main.ts), so for an agent that cannot
   * write files its run is over then, before its sandbox has exited (execute-agent.ts).
   */
  readonly finished = new Promise<void>((resolve) => {
    this.finish = resolve;
  });
  private ask!: () => void;
  /**
   * Resolves when the agent first asks its model (answered from the journal or not): the worker
   * then waits for the answer, the moment executeAgent announces the run's start in.
   */
  readonly asked = new Promise<void>((resolve) => {
    this.ask = resolve;
  });

  constructor(spec: SidecarRun, deps: SidecarDeps) {
    this.spec = spec;
    this.steps = deps.started?.catch(() => undefined) ?? this.steps;
    this.deps = deps;
    this.state = { modelCalls: 0 };
    this.tools = toolDefs(spec.agent, deps.delivery ? spec.apiIntegrations : []);
    if (deps.mcp) this.tools.push(...deps.mcp.defs);
    if (runsCode(spec.agent)) {
      const apis = deps.delivery ? (spec.apiIntegrations ?? []) : [];
      this.workspace = new WorkspaceSteps({
        run: { id: spec.run.id, knex: deps.knex, journal: deps.journal, checkpoints: deps.checkpoints },
        deadline: () => this.endsAt,
        apiCall: apis.length ? (call, logs) => apiCallForProgram(this.apiContext(logs), call) : undefined,
        noApiCall: "this agent has no integration that offers api_call (its integrations_configuration's tools)",
      });
    }
    this.server = http.createServer((req, res) => {
      const handling = this.handle(req, res).catch((err) => {
        if (err instanceof JournalMismatch) this.state.fatalError = err.message;
        if (err instanceof AttemptSuperseded && !this.state.superseded) {
          this.state.superseded = true;
          deps.stopSandbox?.();
        }
        if (err instanceof WorkspaceNotCheckpointed && !this.state.retry) {
          this.state.retry = err.message;
          deps.stopSandbox?.();
        }
        deps.log.warn({ err, runId: spec.run.id }, 'sidecar request failed');
        sendFailure(res, err);
      });
      this.handling.add(handling);
      handling.finally(() => this.handling.delete(handling));
    });
    this.server.once('listening', () => {
      this.listeningAt = performance.now();
    });
  }

  /** When the run times out (its start plus its timeout): bounds its commands. */
  setDeadline(endsAt: number): void {
    this.endsAt = endsAt;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    // A step being written finishes (or fails) before the attempt ends, so the next attempt
    // never reads a journal that is still growing.
    await Promise.allSettled([...this.handling]);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { run, agent, pins } = this.spec;
    const url = req.url ?? '/';
    if (this.listeningAt !== undefined) {
      sandboxStart.observe((performance.now() - this.listeningAt) / 1000);
      this.listeningAt = undefined;
    }
    if (req.method === 'GET' && url === SIDECAR_PATHS.run) {
      const localNames = localToolNames(agent);
      const files = this.tools.filter((t) => localNames.includes(t.name));
      const integrations = this.workspace && this.deps.delivery ? (this.spec.apiIntegrations ?? []).map((i) => i.id) : [];
      return send(res, 200, {
        system: systemPrompt({ ...agent, prompt: await renderRunPrompt(this.deps.knex, this.spec) }, pins, files, undefined, { returned: true, integrations }),
        // File fields carry the run's file ids; the agent is shown where the files are.
        input: { ...run.input, ...this.spec.files?.inputs },
        maxTurns: MAX_TURNS,
        localTools: files.map((t) => t.name),
        files: this.spec.files ? { maxOutputFiles: this.spec.files.maxOutputFiles, maxOutputBytes: this.spec.files.maxOutputBytes } : undefined,
        ...(this.workspace ? { workspace: true } : {}),
      } satisfies RunSpec);
    }
    const body = await readBody(req, this.deps.maxRequestBytes);
    const local = this.workspace?.route(req.method, url, body, (step) => this.serially(step));
    if (local) return send(res, 200, await local);
    if (req.method === 'POST' && url === SIDECAR_PATHS.model) return send(res, ...(await this.serially(() => this.model(body.messages))));
    if (req.method === 'POST' && url.startsWith(SIDECAR_PATHS.tools)) {
      const name = decodeURIComponent(url.slice(SIDECAR_PATHS.tools.length));
      return send(res, 200, await this.serially(() => this.tool(name, body.arguments)));
    }
    send(res, 404, { error: 'unknown sidecar route' });
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const done = this.steps.then(step, step);
    this.steps = done.catch(() => undefined);
    return done;
  }

  private async model(messages: ChatMessage[]): Promise<[number, unknown]> {
    const { run, model } = this.spec;
    this.ask();
    const replayed = this.deps.journal.replay('model', model.model, messages);
    if (replayed) {
      this.lastCalls = ((replayed.response as ModelAnswer).message?.tool_calls ?? []).map((c) => c.function.name);
      return [200, replayed.response];
    }
    const startedAt = new Date();
    try {
      const call = () => complete(model, messages, this.tools, this.deps.dispatcher, this.abort.signal);
      const attributes = { 'run.id': run.id, 'gen_ai.request.model': model.model, 'gen_ai.system': model.provider };
      const tracer = this.deps.tracer;
      const completion = tracer ? await inSpan(tracer, 'model call', attributes, call, this.traceContext) : await call();
      this.state.modelCalls++;
      const answer: ModelAnswer = { message: completion.message };
      this.lastCalls = (completion.message.tool_calls ?? []).map((c) => c.function.name);
      // With the step: a call a resumed run replays from the journal is never counted twice.
      await this.deps.journal.record('model', model.model, messages, answer, { usage: completion.usage }, { startedAt });
      return [200, answer];
    } catch (err) {
      // Not the run's error: the live attempt carries the run on.
      if (err instanceof AttemptSuperseded) throw err;
      // Cut off by closing the sidecar of an attempt that was replaced (it heard so from its
      // heartbeat, while the call was out): the run is another attempt's, nothing is written.
      if (this.abort.signal.aborted && !(await this.deps.journal.holdsRun())) {
        throw new AttemptSuperseded(`The model call of a replaced attempt of run ${run.id} was cut off`);
      }
      const reason = err instanceof ModelCallError ? err.message : `The model call failed: ${(err as Error).message}`;
      this.state.fatalError = reason;
      await appendRunLog(this.deps.knex, run.id, { level: 'error', type: 'model', message: reason });
      return [502, { error: reason }];
    }
  }

  private async tool(name: string, args: unknown): Promise<ToolResult> {
    const replayed = this.deps.journal.replay('tool', name, args);
    if (replayed) {
      if (name === 'output') this.outputGiven(args);
      return replayed.response as ToolResult;
    }
    // Effects are written with the step, in one statement: a resumed run neither loses nor repeats them.
    const logs: LogEntryInput[] = [];
    const memory: Array<{ kind: string; content: string }> = [];
    const startedAt = new Date();
    const result = await this.carryOut(name, args, logs, memory);
    const { agent, actorKey } = this.spec;
    const kept = memory.length ? { packageId: agent.packageId, actorKey, items: memory } : undefined;
    await this.deps.journal.record('tool', name, args, result, { logs, memory: kept }, { startedAt });
    if (name === 'output') this.outputGiven(args);
    return result;
  }

  /** The output, recorded: the run is finished when no call follows it in the model's answer. */
  private outputGiven(value: unknown): void {
    this.state.output = { value };
    if (this.lastCalls.at(-1) === 'output' && this.lastCalls.indexOf('output') === this.lastCalls.length - 1) this.finish();
  }

  private async carryOut(name: string, args: unknown, logs: LogEntryInput[], memory: Array<{ kind: string; content: string }>): Promise<ToolResult> {
    if (!this.tools.some((t) => t.name === name)) return { content: `Unknown tool "${name}". Available: ${this.tools.map((t) => t.name).join(', ')}` };
    if (this.deps.mcp?.has(name)) return this.deps.mcp.call(name, args, logs);
    const a = (args ?? {}) as Record<string, unknown>;
    switch (name) {
      case 'output':
        logs.push({ level: 'info', type: 'output', message: 'The agent produced its output' });
        return { content: 'Output recorded. The run is complete.', done: true };
      case 'api_call':
        return apiCall(this.apiContext(logs), a);
      case 'log':
        logs.push({ level: LOG_LEVELS.includes(String(a.level)) ? (a.level as LogLevel) : 'info', type: 'agent', message: String(a.message ?? '') });
        return { content: 'Logged.' };
      default: {
        const content = String(a.content ?? '').slice(0, 4000);
        if (!content) return { content: `${name} needs a non-empty "content"` };
        memory.push({ kind: name, content });
        logs.push({ level: 'info', type: name, message: content });
        return { content: name === 'pin' ? 'Pinned for later runs.' : 'Noted.' };
      }
    }
  }

  /** What `api_call` and `api-call` need (api-call.ts); their log lines go to `logs`, written with their step. */
  private apiContext(logs: LogEntryInput[]): ApiCallContext {
    return {
      knex: this.deps.knex,
      config: this.deps.delivery!,
      run: this.spec.run,
      integrations: this.spec.apiIntegrations ?? [],
      log: async (level, type, message) => {
        logs.push({ level, type, message });
      },
      signal: this.abort.signal,
    };
  }
}
