// MCP server dependencies (DESIGN.md 7): the sidecar is the MCP client of each `mcp-server`
// dependency with a `remote` (Streamable HTTP). At run start it connects, lists the server's
// tools and offers them to the model as `<server>__<tool>`; a call is forwarded to the server's
// `callTool` and its text content returned. When `remote.auth` names an integration and auth,
// the run's connection of that integration (runs.connections) is opened here, in the worker, and
// its credential injected as the auth's delivery header on every request; credential values the
// server echoes are redacted. The egress policy holds for the URL (checked at start, and again
// at every connect by the dispatcher); no redirect is followed, and no request leaves the
// server's origin. A server that cannot be used at start (unreachable, refused by the policy,
// no usable connection) is a warn entry in the run log and none of its tools are offered: the
// run goes on with the rest.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Knex } from 'knex';
import { type Agent, fetch as undiciFetch } from 'undici';
import type { Config } from '../../shared/config.ts';
import { checkDestination, egressDispatcher } from '../../shared/egress.ts';
import { AnswerTooLarge, cappedResponse } from '../../shared/http/read-capped.ts';
import { integrationOf } from '../../shared/integrations/auths.ts';
import { type ConnectionRow, openCredentials } from '../../shared/integrations/connections.ts';
import { credentialHeader, deliveryInternalHosts, redact, refusedTarget, secretsOf } from '../../shared/integrations/deliver.ts';
import type { Logger } from '../../shared/log.ts';
import type { ResolvedMcpServer } from '../../shared/packages/resolve-agent.ts';
import { type PackageRow, splitName } from '../../shared/packages/types.ts';
import { appendRunLog, type LogEntryInput } from '../../shared/runs/logs.ts';
import type { RunRow } from '../../shared/runs/model.ts';
import type { ToolDef } from './providers.ts';

export interface McpDeps {
  knex: Knex;
  log: Logger;
  /** `credentialProxyLimits.max_response_bytes` caps each answer of a server, as it caps `api_call`'s. */
  config: Pick<Config, 'egressAllowInternalHosts' | 'extraCaCertsPath' | 'secretsKey' | 'credentialProxyLimits'>;
  /** The attempt's cancellation (a cancel, the run's timeout): connecting stops, with no note on the run. */
  signal?: AbortSignal;
}

const START_TIMEOUT_MS = 10_000;
const CALL_TIMEOUT_MS = 60_000;
const MAX_RESULT_CHARS = 100_000;
/** Model tool names: OpenAI and Anthropic both accept ^[a-zA-Z0-9_-]{1,64}$. */
const MAX_TOOL_NAME = 64;

/** `<server>` of `<server>__<tool>`: the package name without its scope, in the tool-name charset. */
export function serverPrefix(id: string): string {
  return (id.split('/').pop() ?? id).replace(/[^a-zA-Z0-9_-]/g, '_');
}

function toolName(prefix: string, tool: string): string {
  return `${prefix}__${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, MAX_TOOL_NAME);
}

class McpStartError extends Error {
  override name = 'McpStartError';
}

interface Connected {
  server: ResolvedMcpServer;
  client: Client;
  dispatcher: Agent;
  secrets: string[];
}

interface Offered {
  conn: Connected;
  tool: string;
}

/** The MCP tools of one run; close() when the run ends. */
export class McpTools {
  readonly defs: ToolDef[] = [];
  private readonly offered = new Map<string, Offered>();
  private readonly connected: Connected[] = [];
  private readonly run: RunRow;
  private readonly deps: McpDeps;

  private constructor(run: RunRow, deps: McpDeps) {
    this.run = run;
    this.deps = deps;
  }

  /** Connects to every server with a remote; `taken` are the names already offered (runtime tools). */
  static async open(run: RunRow, servers: readonly ResolvedMcpServer[], deps: McpDeps, taken: readonly string[] = []): Promise<McpTools> {
    const tools = new McpTools(run, deps);
    const names = new Set(taken);
    const started = await Promise.all(servers.filter((s) => s.remote?.url).map((s) => tools.start(s)));
    for (const s of started) {
      if (!s) continue;
      tools.connected.push(s.conn);
      for (const t of s.tools) {
        const name = toolName(serverPrefix(s.conn.server.id), t.name);
        if (names.has(name)) {
          await tools.note('warn', `MCP tool ${t.name} of ${s.conn.server.id} is not offered: the name ${name} is already taken`);
          continue;
        }
        names.add(name);
        tools.offered.set(name, { conn: s.conn, tool: t.name });
        tools.defs.push({
          name,
          description: t.description ?? `${t.name} (MCP server ${s.conn.server.id})`,
          parameters: (t.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object' },
        });
      }
    }
    return tools;
  }

  has(name: string): boolean {
    return this.offered.has(name);
  }

  /**
   * Calls the tool; its `mcp_call` line goes to `logs`, which the sidecar writes with the call's
   * journal step (server.ts): an attempt superseded meanwhile writes no line, and a resumed run
   * neither loses nor repeats it.
   */
  async call(name: string, args: unknown, logs: LogEntryInput[]): Promise<{ content: string }> {
    const o = this.offered.get(name);
    if (!o) return { content: `Unknown tool "${name}"` };
    const { server, client, secrets } = o.conn;
    const started = Date.now();
    let content: string;
    let error: string | undefined;
    try {
      const result = await client.callTool({ name: o.tool, arguments: (args ?? {}) as Record<string, unknown> }, undefined, { timeout: CALL_TIMEOUT_MS });
      const parts = (Array.isArray(result.content) ? result.content : []) as { type: string; text?: string }[];
      content = parts.map((p) => (p.type === 'text' ? String(p.text ?? '') : `[${p.type} content]`)).join('\n');
      if (!content && result.structuredContent !== undefined) content = JSON.stringify(result.structuredContent);
      content = redact(content, secrets);
      if (content.length > MAX_RESULT_CHARS) content = `${content.slice(0, MAX_RESULT_CHARS)}\n[truncated]`;
      if (result.isError) {
        error = content.slice(0, 500) || 'the tool reported an error';
        content = `The tool reported an error: ${content}`;
      }
    } catch (err) {
      error = redact((err as Error).message, secrets).slice(0, 500);
      content = `The MCP call failed: ${error}`;
    }
    const duration = Date.now() - started;
    const data = { server: server.id, tool: o.tool, duration_ms: duration, ok: !error, ...(error ? { error } : {}) };
    logs.push({
      level: error ? 'warn' : 'info',
      type: 'mcp_call',
      message: `${server.id} ${o.tool}: ${error ? `error (${error})` : 'ok'} in ${duration} ms`,
      data,
    });
    return { content };
  }

  async close(): Promise<void> {
    await Promise.all(
      this.connected.map(async (c) => {
        await c.client.close().catch(() => {});
        await c.dispatcher.close().catch(() => {});
      }),
    );
    this.connected.length = 0;
  }

  private async note(level: 'warn' | 'info', message: string): Promise<void> {
    await appendRunLog(this.deps.knex, this.run.id, { level, type: 'mcp', message });
  }

  /** The run's credential for the server's `remote.auth`: its header and the values to redact. */
  private async credential(server: ResolvedMcpServer, url: string): Promise<{ header: [string, string]; secrets: string[]; allowInternal: string[] }> {
    const { integration, auth_key } = server.remote!.auth!;
    const connId = this.run.connections?.[integration];
    if (!connId) throw new McpStartError(`the run has no connection of ${integration} (add it to the agent's dependencies.integrations)`);
    const { knex, config } = this.deps;
    const row = (await knex('connections').where({ id: connId, org_id: this.run.org_id }).first()) as ConnectionRow | undefined;
    if (!row) throw new McpStartError(`the connection of ${integration} no longer exists`);
    if (row.auth_key !== auth_key) throw new McpStartError(`the connection of ${integration} is of the auth "${row.auth_key}", the server needs "${auth_key}"`);
    // integration_package_id is the integration's '@scope/name'.
    const parts = splitName(row.integration_package_id);
    const pkg = parts
      ? ((await knex('packages').where({ org_id: this.run.org_id, scope: parts.scope, name: parts.name, type: 'integration', ephemeral: false }).first()) as
          | PackageRow
          | undefined)
      : undefined;
    const auth = pkg ? (await integrationOf(knex, pkg)).auths.find((a) => a.key === auth_key) : undefined;
    if (!auth) throw new McpStartError(`${integration} has no auth "${auth_key}"`);
    // The URLs the auth allows now and those the connection was granted (DESIGN.md 5).
    const refused = refusedTarget(url, auth, row);
    if (refused) throw new McpStartError(`${integration}: ${refused}`);
    const credential = openCredentials(config.secretsKey, row);
    let header: [string, string];
    try {
      header = credentialHeader(auth, credential);
    } catch (err) {
      throw new McpStartError((err as Error).message);
    }
    return { header, secrets: secretsOf(auth, credential), allowInternal: deliveryInternalHosts(auth, row, config.egressAllowInternalHosts) };
  }

  private async start(
    server: ResolvedMcpServer,
  ): Promise<{ conn: Connected; tools: { name: string; description?: string; inputSchema?: unknown }[] } | undefined> {
    const { config, log } = this.deps;
    let secrets: string[] = [];
    let dispatcher: Agent | undefined;
    let client: Client | undefined;
    try {
      const url = new URL(server.remote!.url).href;
      const cred = server.remote!.auth ? await this.credential(server, url) : undefined;
      secrets = cred?.secrets ?? [];
      // Internal hosts need a literal authorized_uris entry too (DESIGN.md 7): none without an auth.
      const allowInternal = cred?.allowInternal ?? [];
      await checkDestination(url, { allowInternalHosts: allowInternal });
      const d = egressDispatcher(allowInternal, START_TIMEOUT_MS, config.extraCaCertsPath);
      dispatcher = d;
      const origin = new URL(url).origin;
      const fetchWithCredential = async (target: string | URL, init?: RequestInit): Promise<Response> => {
        if (new URL(String(target)).origin !== origin) throw new Error('the MCP server pointed outside its origin');
        const headers: Record<string, string> = Object.fromEntries(new Headers(init?.headers));
        if (cred) headers[cred.header[0].toLowerCase()] = cred.header[1];
        const res = await undiciFetch(String(target), { ...(init as object), headers, redirect: 'manual', dispatcher: d } as unknown as Parameters<
          typeof undiciFetch
        >[1]);
        // The SDK reads the body: capped, so a server that never stops answering fails the request, not the worker.
        const limit = config.credentialProxyLimits.max_response_bytes;
        return cappedResponse(
          res as unknown as Response,
          limit,
          () => new AnswerTooLarge(limit, `the MCP server's answer is over ${limit} bytes (CREDENTIAL_PROXY_LIMITS.max_response_bytes)`),
        );
      };
      // The SDK (and zod under it) loads with the first agent that has an MCP server (issue 18).
      const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      ]);
      const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: fetchWithCredential });
      client = new Client({ name: 'agent-sidecar', version: '1.0.0' });
      const signal = this.deps.signal;
      await client.connect(transport, { timeout: START_TIMEOUT_MS, signal });
      const tools = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: START_TIMEOUT_MS, signal });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor && tools.length < 1000);
      await this.note('info', `MCP server ${server.id}@${server.version}: ${tools.length} tool(s) offered`);
      return { conn: { server, client, dispatcher: d, secrets }, tools };
    } catch (err) {
      await client?.close().catch(() => {});
      await dispatcher?.close().catch(() => {});
      // Cancelled: the attempt ends now (its caller checks), the server was not at fault.
      if (this.deps.signal?.aborted) return undefined;
      const reason = redact((err as Error).message, secrets).slice(0, 500);
      log.warn({ runId: this.run.id, server: server.id, reason }, 'MCP server unavailable at run start');
      await this.note('warn', `MCP server ${server.id} cannot be used, none of its tools are offered: ${reason}`);
      return undefined;
    }
  }
}
