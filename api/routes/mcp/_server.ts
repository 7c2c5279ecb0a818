// One JSON-RPC envelope of the MCP endpoint, answered by the official SDK in stateless mode: a
// new server and transport per HTTP request (no Mcp-Session-Id, nothing kept between requests,
// so any API replica answers any request), with JSON responses rather than an SSE stream.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CURRENT_API_VERSION } from '../../../shared/api-version.ts';
import { type ErrorCode as ProblemCode, ProblemError, problem } from '../../../shared/errors.ts';
import { problemBody } from '../../middleware/problems.ts';
import type { AppContext } from '../../context.ts';
import { callTool, TOOLS } from './_tools.ts';

const INSTRUCTIONS =
  'Runs the agents of one space of the Agent Execution Service. list_agents shows them with their input schemas; run_agent ' +
  'launches one and waits up to 55 s for its result; get_run (with `wait`) follows a run that is still going, get_run_logs ' +
  'reads its log, cancel_run stops it. A refused call is a tool error whose text starts with the problem code (forbidden, not_found, ' +
  'validation_failed, connection_missing, org_run_rate_limited, ...).';

/** A tool's answer: the object as JSON text and as structured content. */
function toolResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** A problem of the underlying operation as a tool error: `code: detail`, and the problem document. */
function toolError(ctx: AppContext, err: unknown, tool: string): CallToolResult {
  let p: ProblemError;
  if (err instanceof ProblemError) p = err;
  else {
    ctx.services.log.error({ err, requestId: ctx.state.requestId, tool }, 'mcp tool failed');
    p = problem('internal_error', 'The tool failed; quote the request id when reporting it.');
  }
  const body = problemBody(ctx, p);
  return { content: [{ type: 'text', text: `${p.code}: ${p.detail}` }], structuredContent: body, isError: true };
}

/** The SDK (and zod under it), loaded by the first envelope: an API nobody asks over MCP does not hold it (issue 18). */
let sdk:
  | Promise<
      [
        typeof import('@modelcontextprotocol/sdk/server/index.js'),
        typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
        typeof import('@modelcontextprotocol/sdk/types.js'),
      ]
    >
  | undefined;
const loadSdk = () =>
  (sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]));

function mcpServer(
  ctx: AppContext,
  [{ Server }, , { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError }]: Awaited<ReturnType<typeof loadSdk>>,
): Server {
  const server = new Server(
    { name: 'agent-execution-service', title: 'Agent Execution Service', version: CURRENT_API_VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { title: t.title, ...t.annotations },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}; tools/list lists ${TOOLS.map((t) => t.name).join(', ')}`);
    try {
      return toolResult(await callTool(ctx, tool, request.params.arguments));
    } catch (err) {
      return toolError(ctx, err, tool.name);
    }
  });
  return server;
}

/** The transport's own refusals (an envelope that is not JSON-RPC, an unsupported protocol version...) as problems. */
const REFUSALS: Record<number, ProblemCode> = { 400: 'validation_failed', 404: 'not_found', 413: 'payload_too_large', 415: 'unsupported_media_type' };

/**
 * Answers one envelope (`body`, already parsed) on `ctx`. The transport sees the request's
 * `Mcp-Protocol-Version` and an Accept of both JSON and SSE: it answers JSON whatever the client
 * prefers (`enableJsonResponse`).
 */
export async function answerEnvelope(ctx: AppContext, body: unknown): Promise<void> {
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  const version = ctx.get('Mcp-Protocol-Version');
  if (version) headers['mcp-protocol-version'] = version;
  const request = new Request(new URL(ctx.originalUrl, ctx.services.config.publicUrl), { method: 'POST', headers });
  const modules = await loadSdk();
  const transport = new modules[1].WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const server = mcpServer(ctx, modules);
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(request, { parsedBody: body });
    const text = await response.text();
    if (response.status >= 400) {
      let message = `The MCP transport answered ${response.status}`;
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        // not JSON-RPC: keep the status
      }
      throw problem(REFUSALS[response.status] ?? 'internal_error', message);
    }
    ctx.status = response.status;
    if (text) {
      ctx.type = 'application/json';
      ctx.body = text;
    } else {
      // 202: notifications or responses only, nothing to answer.
      ctx.body = '';
      ctx.status = response.status;
      ctx.remove('Content-Type');
    }
  } finally {
    await server.close();
  }
}
