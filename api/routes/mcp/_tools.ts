// The tools of the MCP endpoint (DESIGN.md 7, shared/mcp/README.md). Each one is the REST
// operation it mirrors, called through the same functions, in the caller's space and with the
// caller's permissions: `mcp:read` or `mcp:invoke`, and the permission of that operation.
import type { ValidateFunction } from 'ajv';
import { runWithFiles } from '../../../shared/files/model.ts';
import type { Scope } from '../../../shared/permissions.ts';
import { assertValid, bodyAjv } from '../../../shared/validation.ts';
import { problem } from '../../../shared/errors.ts';
import type { AppContext } from '../../context.ts';
import type { JsonSchema } from '../../route.ts';
import { listAgents } from '../../resources/agents.ts';
import { launchable, launchConnections, launchConnectionsBody, launchFromRequest } from '../../resources/launch.ts';
import { MAX_WAIT_SECONDS, waitForRun } from '../../resources/run-wait.ts';
import { cancelRun, findVisibleRun, runLogPage } from '../../resources/runs.ts';

export interface McpTool {
  name: string;
  title: string;
  description: string;
  /** Every one is needed: the module's scope and the scope of the REST operation. */
  needs: readonly Scope[];
  inputSchema: JsonSchema & { type: 'object' };
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint: boolean };
  call(ctx: AppContext, args: any): Promise<Record<string, unknown>>;
}

const RUN_ID = { type: 'string', minLength: 1, description: 'The run id (`run_...`)' } as const;
const AGENT_ID = /^(@[a-z0-9][a-z0-9-]*)\/([a-z0-9][a-z0-9-]*)$/;

export const TOOLS: readonly McpTool[] = [
  {
    name: 'list_agents',
    title: 'List agents',
    description:
      'Agents visible from the space (its own and those shared from the default space), sorted by id, as GET /api/agents shows ' +
      'them: id, description, input schema (`input.schema`), output schema, version. Offset pagination. Needs mcp:read and agents:read.',
    needs: ['mcp:read', 'agents:read'],
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size (1 to 100)' },
        offset: { type: 'integer', minimum: 0, default: 0, description: 'Agents to skip' },
      },
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async call(ctx, args: { limit: number; offset: number }) {
      return { ...(await listAgents(ctx, args.limit, args.offset)), offset: args.offset };
    },
  },
  {
    name: 'run_agent',
    title: 'Run an agent',
    description:
      `Launches a run of the agent, as POST /api/agents/{scope}/{name}/run does (input validated against the agent's input schema, ` +
      `organization run limits, a usable connection per integration dependency), then waits up to ${MAX_WAIT_SECONDS} s for it ` +
      `to end and returns the run: \`status\` (success, failed, timeout, cancelled; or still pending/running when the wait elapsed: ` +
      `follow it with get_run), \`result.output\` and \`error\`. Needs mcp:invoke and agents:run.`,
    needs: ['mcp:invoke', 'agents:run'],
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['agent'],
      properties: {
        agent: { type: 'string', pattern: AGENT_ID.source, description: 'The agent id, `@scope/name` (see list_agents)' },
        input: { type: 'object', default: {}, description: "The run input, valid against the agent's input schema (defaults applied)" },
        version: { type: 'string', minLength: 1, description: 'Exact version, dist-tag or semver range; the latest published version by default' },
        connections: launchConnectionsBody,
      },
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    async call(ctx, args: { agent: string; input: Record<string, unknown>; version?: string; connections?: Record<string, string> }) {
      const [, scope, name] = AGENT_ID.exec(args.agent)!;
      const { agent, input, files } = await launchable(ctx, scope, name, args.version, args.input);
      const connections = await launchConnections(ctx, agent, args.connections);
      const launched = await launchFromRequest(ctx, { agent, input, files, connections });
      return runWithFiles(ctx.services.knex, await waitForRun(ctx, await findVisibleRun(ctx, launched.id), MAX_WAIT_SECONDS, 'agents:run'));
    },
  },
  {
    name: 'get_run',
    title: 'Read a run',
    description:
      `A run the caller may read (its own runs, or every run of the space with runs:read-all), with its files, as GET /api/runs/{id} ` +
      `shows it; \`wait\` (seconds, at most ${MAX_WAIT_SECONDS}) returns as soon as it ends. Needs mcp:read and runs:read.`,
    needs: ['mcp:read', 'runs:read'],
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['run_id'],
      properties: {
        run_id: RUN_ID,
        wait: { type: 'number', minimum: 0, maximum: MAX_WAIT_SECONDS, default: 0, description: 'Seconds to wait for the run to end' },
      },
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async call(ctx, args: { run_id: string; wait: number }) {
      return runWithFiles(ctx.services.knex, await waitForRun(ctx, await findVisibleRun(ctx, args.run_id), args.wait));
    },
  },
  {
    name: 'get_run_logs',
    title: 'Read the log of a run',
    description:
      'Log entries of a run the caller may read with `seq` greater than `since`, ascending, as GET /api/runs/{id}/logs shows them ' +
      '(debug entries need runs:delete). While `hasMore`, call again with `since` = `nextSince`. Needs mcp:read and runs:read.',
    needs: ['mcp:read', 'runs:read'],
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['run_id'],
      properties: {
        run_id: RUN_ID,
        since: { type: 'integer', minimum: 0, default: 0, description: 'Entries after this sequence number' },
        limit: { type: 'integer', minimum: 1, maximum: 1000, default: 1000, description: 'Page size (1 to 1000)' },
      },
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async call(ctx, args: { run_id: string; since: number; limit: number }) {
      const { data, hasMore } = await runLogPage(ctx, args.run_id, args.since, args.limit);
      return { object: 'list', data, hasMore, ...(hasMore ? { nextSince: data[data.length - 1].seq } : {}) };
    },
  },
  {
    name: 'cancel_run',
    title: 'Cancel a run',
    description:
      'Cancels a run the caller may read, as POST /api/runs/{id}/cancel does: its sandbox is killed and it ends `cancelled` (follow ' +
      'it with get_run and `wait`). A run that already ended is refused (run_not_cancellable). Needs mcp:invoke and runs:cancel.',
    needs: ['mcp:invoke', 'runs:cancel'],
    inputSchema: { type: 'object', additionalProperties: false, required: ['run_id'], properties: { run_id: RUN_ID } },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async call(ctx, args: { run_id: string }) {
      return cancelRun(ctx, args.run_id);
    },
  },
];

const validators = new Map<string, ValidateFunction>(TOOLS.map((t) => [t.name, bodyAjv.compile(t.inputSchema)]));

/**
 * Calls a tool for the request's caller: refused (403 `forbidden`) without one of the scopes it
 * needs; its arguments checked against its input schema (400 `validation_failed`, defaults
 * applied). Problems are thrown as the REST operation throws them.
 */
export async function callTool(ctx: AppContext, tool: McpTool, args: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
  const held = ctx.state.tenancy!.scopes;
  const missing = tool.needs.filter((s) => !held.has(s));
  if (missing.length) throw problem('forbidden', `The ${tool.name} tool needs the ${missing.join(' and ')} permission${missing.length > 1 ? 's' : ''}`);
  const value = structuredClone(args ?? {});
  assertValid(validators.get(tool.name)!, value);
  return tool.call(ctx, value);
}
