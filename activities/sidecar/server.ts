// The sidecar (DESIGN.md section 3): one per run, in the worker, on a unix socket that is the
// sandbox's only way out. It holds what the runtime must never see (the model key, the
// database) and carries out the runtime tools.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../shared/log.ts';
import type { ModelConfig } from '../../shared/models/resolve.ts';
import type { ResolvedAgent } from '../../shared/packages/resolve-agent.ts';
import { notifyRunEvent } from '../../shared/runs/events.ts';
import { appendRunLog, type LogLevel } from '../../shared/runs/logs.ts';
import type { RunRow, RunUsage } from '../../shared/runs/model.ts';
import { SANDBOX_UID } from '../sandbox/spawn.ts';
import { type ApiCallContext, type ApiIntegration, apiCall, apiCallTool } from './api-call.ts';
import type { McpTools } from './mcp-tools.ts';
import { type ChatMessage, complete, ModelCallError, type ToolDef } from './providers.ts';

export interface SidecarState {
  output?: { value: unknown };
  /** Why the run cannot go on (a model provider error, ...): becomes the run's error. */
  fatalError?: string;
  usage: RunUsage;
  modelCalls: number;
}

export interface SidecarDeps {
  knex: Knex;
  log: Logger;
  dispatcher: Dispatcher;
  maxRequestBytes: number;
  /** The run's MCP server tools (mcp-tools.ts), offered after the runtime tools. */
  mcp?: McpTools;
  /** What `api_call` needs of the worker's config (the secrets key stays in the worker). */
  delivery?: ApiCallContext['config'];
}

export interface SidecarRun {
  run: RunRow;
  agent: ResolvedAgent;
  model: ModelConfig;
  pins: string[];
  actorKey: string;
  /** Integrations that offer `api_call` to this run (see api-call.ts); none when absent. */
  apiIntegrations?: ApiIntegration[];
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'];
const MAX_TURNS = 50;

export function systemPrompt(agent: ResolvedAgent, pins: string[]): string {
  const parts = [agent.prompt.trim()];
  if (agent.skills.length) {
    parts.push('# Skills', ...agent.skills.map((s) => `## ${s.name}\n${s.description ? `${s.description}\n\n` : ''}${s.content.trim()}`));
  }
  if (pins.length) parts.push('# Pinned notes from earlier runs', pins.map((p) => `- ${p}`).join('\n'));
  parts.push('When you are done, call the `output` tool with the result; its arguments are the result object itself.');
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
      description: "Pin a fact for later runs of this agent by the same actor: it is shown in their system prompt.",
      parameters: { type: 'object', required: ['content'], properties: { content: { type: 'string' } } },
    });
  }
  const api = apiCallTool(apiIntegrations);
  if (api) tools.push(api);
  return tools;
}

function readBody(req: http.IncomingMessage, limit: number): Promise<any> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new Error(`request over ${limit} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {});
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export class Sidecar {
  readonly state: SidecarState = { usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, modelCalls: 0 };
  readonly socketDir: string;
  private readonly server: http.Server;
  private readonly abort = new AbortController();
  private readonly tools: ToolDef[];
  private readonly deps: SidecarDeps;
  private readonly spec: SidecarRun;

  constructor(spec: SidecarRun, deps: SidecarDeps) {
    this.spec = spec;
    this.deps = deps;
    this.tools = toolDefs(spec.agent, deps.delivery ? spec.apiIntegrations : []);
    if (deps.mcp) this.tools.push(...deps.mcp.defs);
    this.socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-'));
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        deps.log.warn({ err, runId: spec.run.id }, 'sidecar request failed');
        if (!res.headersSent) send(res, 500, { error: (err as Error).message });
      });
    });
  }

  get socketPath(): string {
    return path.join(this.socketDir, 'sidecar.sock');
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.socketPath, resolve);
    });
    // The sandbox runs as an unprivileged uid: it may connect, nothing more.
    if (process.getuid?.() === 0) {
      fs.chownSync(this.socketDir, SANDBOX_UID, SANDBOX_UID);
      fs.chmodSync(this.socketDir, 0o700);
    }
    fs.chmodSync(this.socketPath, 0o777);
  }

  async close(): Promise<void> {
    this.abort.abort();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    fs.rmSync(this.socketDir, { recursive: true, force: true });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { run, agent, pins } = this.spec;
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === '/v1/run') {
      return send(res, 200, { system: systemPrompt(agent, pins), input: run.input, maxTurns: MAX_TURNS });
    }
    const body = await readBody(req, this.deps.maxRequestBytes);
    if (req.method === 'POST' && url === '/v1/model') return send(res, ...(await this.model(body.messages)));
    if (req.method === 'POST' && url.startsWith('/v1/tools/')) return send(res, 200, await this.tool(url.slice('/v1/tools/'.length), body.arguments));
    if (req.method === 'POST' && url === '/v1/log') {
      await this.log(LOG_LEVELS.includes(body.level) ? body.level : 'info', 'runtime', String(body.message ?? ''));
      return send(res, 200, { ok: true });
    }
    send(res, 404, { error: 'unknown sidecar route' });
  }

  private async model(messages: ChatMessage[]): Promise<[number, unknown]> {
    const { run, model } = this.spec;
    try {
      const completion = await complete(model, messages, this.tools, this.deps.dispatcher, this.abort.signal);
      this.state.modelCalls++;
      const u = completion.usage;
      const cost = u.costUsd ?? (u.inputTokens * model.inputCostPerMTok + u.outputTokens * model.outputCostPerMTok) / 1e6;
      const usage = this.state.usage;
      usage.inputTokens += u.inputTokens;
      usage.outputTokens += u.outputTokens;
      usage.costUsd = Math.round((usage.costUsd + cost) * 1e9) / 1e9;
      await this.deps.knex('runs').where({ id: run.id }).update({ usage: JSON.stringify(usage) });
      await notifyRunEvent(this.deps.knex, { kind: 'usage', runId: run.id, orgId: run.org_id, spaceId: run.space_id });
      return [200, { message: completion.message }];
    } catch (err) {
      const reason = err instanceof ModelCallError ? err.message : `The model call failed: ${(err as Error).message}`;
      this.state.fatalError = reason;
      await this.log('error', 'model', reason);
      return [502, { error: reason }];
    }
  }

  private async tool(name: string, args: unknown): Promise<{ content: string; done?: boolean }> {
    const { run, agent, actorKey } = this.spec;
    if (!this.tools.some((t) => t.name === name)) return { content: `Unknown tool "${name}". Available: ${this.tools.map((t) => t.name).join(', ')}` };
    if (this.deps.mcp?.has(name)) return this.deps.mcp.call(name, args);
    const a = (args ?? {}) as Record<string, unknown>;
    switch (name) {
      case 'output':
        this.state.output = { value: args };
        await this.log('info', 'output', 'The agent produced its output');
        return { content: 'Output recorded. The run is complete.', done: true };
      case 'api_call':
        return apiCall(
          {
            knex: this.deps.knex,
            config: this.deps.delivery!,
            run,
            integrations: this.spec.apiIntegrations ?? [],
            log: (level, type, message) => this.log(level, type, message),
            signal: this.abort.signal,
          },
          a,
        );
      case 'log':
        await this.log(LOG_LEVELS.includes(String(a.level)) ? (a.level as LogLevel) : 'info', 'agent', String(a.message ?? ''));
        return { content: 'Logged.' };
      default: {
        const content = String(a.content ?? '').slice(0, 4000);
        if (!content) return { content: `${name} needs a non-empty "content"` };
        await this.deps.knex('agent_memory').insert({ org_id: run.org_id, package_id: agent.packageId, actor_key: actorKey, kind: name, content, run_id: run.id });
        await this.log('info', name, content);
        return { content: name === 'pin' ? 'Pinned for later runs.' : 'Noted.' };
      }
    }
  }

  private async log(level: LogLevel, type: string, message: string): Promise<void> {
    await appendRunLog(this.deps.knex, this.spec.run.id, { level, type, message });
  }
}
