import { problem } from '../../../shared/errors.ts';
import { readJsonBody } from '../../middleware/body.ts';
import { defineRoute } from '../../route.ts';
import { answerEnvelope } from './_server.ts';
import { TOOLS } from './_tools.ts';

const jsonRpcId = { type: ['string', 'integer'], description: 'Request id, echoed by its response' };

// What a client sends: requests and notifications (a stateless server sends no requests of its
// own, so no client responses are expected).
const jsonRpcMessage = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: jsonRpcId,
    method: {
      type: 'string',
      description: '`initialize`, `notifications/initialized`, `ping`, `tools/list`, `tools/call` (a request has an `id`, a notification none)',
    },
    params: { type: 'object', description: 'For `tools/call`: `{name, arguments}`' },
  },
};

const jsonRpcResponse = {
  type: 'object',
  required: ['jsonrpc', 'id'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: jsonRpcId,
    result: {
      type: 'object',
      description:
        'For `tools/call`: `{content: [{type: "text", text}], structuredContent, isError?}`: the operation\'s answer as JSON text ' +
        'and as an object; a refused call has `isError: true`, the text `<code>: <detail>` and the problem document as `structuredContent`',
    },
    error: {
      type: 'object',
      required: ['code', 'message'],
      description: 'A JSON-RPC error: unknown method (-32601), unknown tool or invalid parameters (-32602)',
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
  },
};

export default defineRoute({
  method: 'post',
  path: '/api/mcp',
  operationId: 'mcp',
  summary: 'MCP server (Streamable HTTP): list, run, read and cancel agent runs as tools',
  description:
    `The service as a Model Context Protocol server (Streamable HTTP transport, stateless: no \`Mcp-Session-Id\`, every request ` +
    `stands alone, answered as JSON, never as an SSE stream; GET and DELETE are 405). Tools: ${TOOLS.map((t) => `\`${t.name}\``).join(', ')}, ` +
    `in the request's space and for its caller (a \`Service-User\` end-user included). The caller needs \`mcp:read\` or \`mcp:invoke\` ` +
    `(403 otherwise); each tool also needs \`mcp:read\` (list_agents, get_run, get_run_logs) or \`mcp:invoke\` (run_agent, cancel_run) ` +
    `and the permission of the REST operation it mirrors (agents:read, agents:run, runs:read, runs:cancel): a call without them ` +
    `is a tool error (\`isError\`, \`forbidden: ...\`), as is any problem of that operation (a run the caller cannot read is ` +
    `\`not_found\`). \`run_agent\` waits up to 55 s for the run to end. The rate limit counts JSON-RPC envelopes (HTTP requests). ` +
    `Errors of the request itself (credentials, malformed JSON, not JSON-RPC) are problem documents.`,
  tag: 'MCP',
  auth: 'any',
  context: 'space',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  headers: {
    'Mcp-Protocol-Version': {
      description: 'The negotiated MCP protocol version, sent after `initialize` (an unsupported one is 400)',
      schema: { type: 'string' },
    },
    Accept: { description: 'MCP clients send `application/json, text/event-stream`; the answer is JSON whatever it says', schema: { type: 'string' } },
  },
  streamBody: {
    contentType: 'application/json',
    schema: { description: 'One JSON-RPC 2.0 message, or a batch of them', oneOf: [jsonRpcMessage, { type: 'array', minItems: 1, items: jsonRpcMessage }] },
  },
  responses: {
    200: { description: 'The JSON-RPC response (an array for a batch)', schema: { oneOf: [jsonRpcResponse, { type: 'array', items: jsonRpcResponse }] } },
    202: { description: 'Notifications or responses only: accepted, no body' },
  },
  async handler(ctx) {
    const { scopes } = ctx.state.tenancy!;
    if (!scopes.has('mcp:read') && !scopes.has('mcp:invoke')) throw problem('forbidden', 'The MCP endpoint needs the mcp:read or mcp:invoke permission');
    const body = await readJsonBody(ctx);
    if (body === undefined)
      throw problem('validation_failed', {
        detail: 'Send a JSON-RPC 2.0 message as the body',
        errors: [{ field: '(root)', code: 'required', message: 'Send a JSON-RPC 2.0 message as the body' }],
      });
    await answerEnvelope(ctx, body);
  },
});
